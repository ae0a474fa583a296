import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

describe('what the dashboard API tells a client that sent something wrong', () => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  beforeAll(async () => {
    service = await buildTestApp()
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account)
  })
  afterAll(() => service.close())

  /** When a value is none of a union's choices: one detail that names them. */
  describe('validation details for choices', () => {
    const detailsOf = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const response = await service.app.inject({ method, url, headers: asScript(account), ...(payload === undefined ? {} : { payload }) })
      expect(response.statusCode).toBe(400)
      expect(response.json().error.code).toBe('validation_error')
      return response.json<{ error: { details: { field?: string; message: string }[] } }>().error.details
    }

    it('names the allowed values of an enum', async () => {
      expect(await detailsOf('GET', `/api/v1/sites/${site.id}/verifications?action=nope`)).toEqual([
        { field: 'querystring.action', message: 'must be one of: allow, challenge, block, rejected' },
      ])
      expect(await detailsOf('GET', `/api/v1/sites/${site.id}/stats?interval=minute`)).toEqual([
        { field: 'querystring.interval', message: 'must be one of: hour, day' },
      ])
      // A parameter given twice is an array, which fails each literal's type as well as its value.
      expect(await detailsOf('GET', `/api/v1/sites/${site.id}/stats?interval=hour&interval=day`)).toEqual([
        { field: 'querystring.interval', message: 'must be one of: hour, day' },
      ])
    })

    it('names a field or parameter the route does not take, not the object it was sent in', async () => {
      expect(await detailsOf('POST', '/api/v1/sites', { name: 'Shop', colour: 'red' })).toEqual([
        { field: 'colour', message: 'is not a field of this request' },
      ])
      expect(await detailsOf('GET', `/api/v1/audit-log?site=${site.id}`)).toEqual([
        { field: 'querystring.site', message: 'is not a parameter of this route' },
      ])
    })

    it('echoes at most 64 characters of the name of a field the route does not take', async () => {
      expect(await detailsOf('POST', '/api/v1/sites', { name: 'Shop', ['x'.repeat(5000)]: 1 })).toEqual([
        { field: `${'x'.repeat(64)}…`, message: 'is not a field of this request' },
      ])
    })

    it('names the field that is wrong inside an optional body, not the body\'s other choice (null)', async () => {
      expect(await detailsOf('POST', `/api/v1/sites/${site.id}/secret/rotate`, { invalidateImmediately: 'yes' })).toEqual([
        { field: 'invalidateImmediately', message: 'must be boolean' },
      ])
    })
  })

  /** The dashboard API reads JSON only, and says so to a client that sends something else. */
  describe('bodies that are not JSON', () => {
    const listNames = async () =>
      (await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asScript(account) })).json<{ items: { name: string }[] }>().items.map((site) => site.name)

    // fetch() with a JSON.stringify body and no Content-Type sends text/plain;charset=UTF-8.
    it.each(['text/plain;charset=UTF-8', 'text/plain', 'application/xml', 'application/x-www-form-urlencoded'])(
      'answers 415 unsupported_media_type, naming application/json, to a JSON body sent as %s, and creates nothing',
      async (contentType) => {
        const response = await service.app.inject({
          method: 'POST',
          url: '/api/v1/sites',
          headers: { ...asScript(account), 'content-type': contentType },
          payload: JSON.stringify({ name: `Sent as ${contentType}` }),
        })
        expect(response.statusCode).toBe(415)
        expect(response.json().error).toMatchObject({ code: 'unsupported_media_type', message: expect.stringContaining('application/json') })
        expect(await listNames()).not.toContain(`Sent as ${contentType}`)
      },
    )

    it('takes a body-less request whatever Content-Type it names', async () => {
      const doomed = await createTestSite(service.app, account)
      const response = await service.app.inject({
        method: 'DELETE',
        url: `/api/v1/sites/${doomed.id}`,
        headers: { ...asScript(account), 'content-type': 'text/plain' },
      })
      expect(response.statusCode).toBe(204)
    })
  })
})

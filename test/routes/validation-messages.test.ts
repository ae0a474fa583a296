import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

/** What a client is told when a value is none of a union's choices: one detail that names them. */
describe('validation details for choices', () => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  beforeAll(async () => {
    service = await buildTestApp()
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account)
  })
  afterAll(() => service.close())

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

  it('names the field that is wrong inside an optional body, not the body\'s other choice (null)', async () => {
    expect(await detailsOf('POST', `/api/v1/sites/${site.id}/secret/rotate`, { invalidateImmediately: 'yes' })).toEqual([
      { field: 'invalidateImmediately', message: 'must be boolean' },
    ])
  })
})

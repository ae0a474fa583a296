import { beforeAll, describe, expect, it } from 'vitest'
import { asScript, createTestSite, type CreatedSite } from '../helpers/dashboard-client.js'
import { browserHeaders, createTestSite as createCoreSite, obtainToken } from '../helpers/core-flow.js'
import { useAppWithOwner } from '../helpers/site-sharing.js'
import { deployments } from '../helpers/test-app.js'

/** JSON bodies whose bytes are not UTF-8: Latin-1's é, a lone continuation byte, a truncated sequence. */
const notUtf8 = [Buffer.from('{"name":"caf\xe9"}', 'latin1'), Buffer.from('{"name":"a\x80"}', 'latin1'), Buffer.from('{"name":"a\xe2\x82"}', 'latin1')]

describe.each(deployments)('the encoding of request bodies on $name', (deployment) => {
  const { available } = deployment
  const suite = useAppWithOwner(deployment, { rateLimitPerMinute: 0 })
  let site: CreatedSite
  beforeAll(async () => {
    if (available) site = await createTestSite(suite.service.app, suite.owner, { name: 'Before' })
  })

  const rename = (payload: Buffer | string, contentType = 'application/json') =>
    suite.service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: { ...asScript(suite.owner), 'content-type': contentType }, payload })
  const storedName = async () => (await suite.service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}`, headers: asScript(suite.owner) })).json<{ name: string }>().name

  it.skipIf(!available)('refuses a body that is not UTF-8 with 400 validation_error, storing nothing', async () => {
    for (const payload of notUtf8) {
      const response = await rename(payload)
      expect(response.statusCode, payload.toString('hex')).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'validation_error', message: 'The body is not valid UTF-8.' })
    }
    expect(await storedName()).toBe('Before')
  })

  it.skipIf(!available)('does not make two passwords of different invalid bytes the same one', async () => {
    for (const byte of ['\xff', '\xfe']) {
      const signUp = await suite.service.app.inject({
        method: 'POST',
        url: '/api/v1/accounts',
        headers: { 'content-type': 'application/json' },
        payload: Buffer.from(`{"email":"bytes-${byte.charCodeAt(0)}@example.com","password":"long enough password ${byte}"}`, 'latin1'),
      })
      expect(signUp.statusCode).toBe(400)
      expect(signUp.json().error.message).toBe('The body is not valid UTF-8.')
    }
  })

  it.skipIf(!available)('refuses another charset with a byte the body would be read wrong by, and UTF-16 or UTF-32 always, with 415', async () => {
    for (const [contentType, payload] of [
      ['application/json; charset=iso-8859-1', Buffer.from('{"name":"Caf\xe9"}', 'latin1')],
      ['application/json;charset="windows-1252"', Buffer.from('{"name":"Na\xefve"}', 'latin1')],
      ['application/json; charset=utf-16le', Buffer.from('{"name":"Wide"}', 'utf16le')],
      // ASCII text, but the label says two bytes a character: not read as UTF-8 either.
      ['application/json; charset=utf-16le', Buffer.from('{"name":"Latin"}')],
      ['application/json; charset=UTF-32', Buffer.from('{"name":"Latin"}')],
    ] as const) {
      const response = await rename(payload, contentType)
      expect(response.statusCode, contentType).toBe(415)
      expect(response.json().error.code).toBe('unsupported_media_type')
    }
    expect(await storedName()).toBe('Before')
  })

  it.skipIf(!available)('takes UTF-8 named in any case, quoted or not, ASCII, ASCII text under another label, and a byte order mark', async () => {
    for (const [contentType, name] of [
      ['application/json; charset=UTF-8', 'Café'],
      ['application/json; charset="utf-8"', 'Naïve'],
      ['application/json;charset=utf8', 'Ünïcode'],
      ['application/json; charset=us-ascii', 'Plain'],
      ['application/json; charset=iso-8859-1', 'Latin'],
      ['application/json;charset="windows-1252"', 'Windows'],
    ]) {
      const response = await rename(JSON.stringify({ name }), contentType)
      expect(response.statusCode, contentType).toBe(200)
      expect(await storedName()).toBe(name)
    }
    expect((await rename(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"With a BOM"}')]))).statusCode).toBe(200)
    expect(await storedName()).toBe('With a BOM')
  })

  it.skipIf(!available)('verifies a token sent to Siteverify as ASCII JSON labelled us-ascii or iso-8859-1, as .NET and Java clients label it', async () => {
    const core = await createCoreSite(suite.service.app)
    for (const contentType of ['application/json; charset=us-ascii', 'application/json; charset=iso-8859-1']) {
      const token = await obtainToken(suite.service.app, browserHeaders(core.siteKey))
      const payload = JSON.stringify({ secret: core.secretKey, response: token })
      const response = await suite.service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', headers: { 'content-type': contentType }, payload })
      expect(response.statusCode, contentType).toBe(200)
      expect(response.json(), contentType).toMatchObject({ success: true, 'error-codes': [] })
    }
  })

  it.skipIf(!available)("answers Siteverify's JSON that is not UTF-8, or of another charset, with its own 200 bad-request", async () => {
    for (const [contentType, payload] of [
      ['application/json', Buffer.from(`{"secret":"${site.secretKey}","response":"a\xff"}`, 'latin1')],
      ['application/json; charset=iso-8859-1', Buffer.from(`{"secret":"${site.secretKey}","response":"\xe9"}`, 'latin1')],
      ['application/json; charset=utf-16le', Buffer.from(JSON.stringify({ secret: site.secretKey, response: 'x' }), 'utf16le')],
    ] as const) {
      const response = await suite.service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', headers: { 'content-type': contentType }, payload })
      expect(response.statusCode).toBe(200)
      expect(response.body).toBe('{"success":false,"error-codes":["bad-request"],"messages":[]}')
    }
  })
})

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { browserFingerprint, browserHeaders, fetchChallenge, humanSubmission, submitSolution } from '../helpers/core-flow.js'
import { startWithinOneEphemeralIdWeek } from '../helpers/ephemeral-id-week.js'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

interface LogPage {
  items: { id: string; action: string; device: string | null }[]
  nextCursor: string | null
}

/** The verification log names each verification's device, as Siteverify names it to the site's backend. */
describe.each(deployments)("the verification log's devices ($name)", ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, config: { rateLimitPerMinute: 0 } })
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account, { settings: { difficulty: 4 } })
  })
  afterAll(() => service?.close())
  // One device's verifications get one id (and are found together) only within a week.
  beforeEach(startWithinOneEphemeralIdWeek)

  /** A verification with this fingerprint and user agent: its answer and X-Request-Id (the row's id). */
  async function verify(fingerprint: object, userAgent?: string) {
    const headers = { ...browserHeaders(site.siteKey), ...(userAgent === undefined ? {} : { 'user-agent': userAgent }) }
    const challenge = await fetchChallenge(service.app, headers)
    const response = await submitSolution(service.app, headers, { ...humanSubmission(challenge), fingerprint })
    return { body: response.json<{ action: string; token?: string }>(), rowId: String(response.headers['x-request-id']) }
  }

  const logPage = async (query: string) => {
    await service.app.verificationLog.flush()
    return service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications${query}`, headers: asScript(account) })
  }

  it.runIf(available)("gives each row its device, the id Siteverify answered for its token, and finds a device's rows, blocked ones too", async () => {
    const first = await verify(browserFingerprint)
    const redeemed = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response: first.body.token } })
    const device = redeemed.json<{ metadata: { ephemeral_id: string } }>().metadata.ephemeral_id
    expect(device).toMatch(/^[0-9a-f]{24}$/)
    // The same device driven by a script that says so: blocked, and still that device.
    const blocked = await verify(browserFingerprint, 'python-requests/2.31.0')
    expect(blocked.body.action).toBe('block')
    const other = await verify({ ...browserFingerprint, canvas: '0d9e8f7a6b5c4d3e2f10' })
    const { canvas: _canvas, ...withoutCanvas } = browserFingerprint
    const nameless = await verify(withoutCanvas)

    const all = (await logPage('')).json<LogPage>().items
    const deviceOf = (rowId: string) => all.find((item) => item.id === rowId)?.device
    expect(deviceOf(first.rowId)).toBe(device)
    expect(deviceOf(blocked.rowId)).toBe(device)
    expect(deviceOf(other.rowId)).toMatch(/^[0-9a-f]{24}$/)
    expect(deviceOf(other.rowId)).not.toBe(device)
    expect(deviceOf(nameless.rowId)).toBeNull()

    for (const wanted of [device, device.toUpperCase()]) {
      const found = await logPage(`?device=${wanted}`)
      expect(found.statusCode).toBe(200)
      expect(found.json<LogPage>().items.map((item) => [item.id, item.action])).toEqual([
        [blocked.rowId, 'block'],
        [first.rowId, 'allow'],
      ])
    }
    expect((await logPage(`?device=${device}&action=block`)).json<LogPage>().items.map((item) => item.id)).toEqual([blocked.rowId])
  })

  it.runIf(available).each([
    ['23 digits', 'a'.repeat(23)],
    ['25 digits', 'a'.repeat(25)],
    ['a letter past f', `${'a'.repeat(23)}g`],
  ])('answers 400 validation_error on querystring.device for %s', async (_case, device) => {
    const response = await logPage(`?device=${device}`)
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({ code: 'validation_error', details: [expect.objectContaining({ field: 'querystring.device' })] })
  })
})

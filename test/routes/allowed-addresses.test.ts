import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { MAX_ALLOWED_ADDRESSES } from '../../src/domain/sites/allowed-addresses.js'
import { browserFingerprint, solve } from '../helpers/core-flow.js'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

/** The service sits behind a proxy on 127.0.0.1 (app.inject's default peer), which TRUST_PROXY names. */
const PROXY = '127.0.0.1'
const OFFICE = '5.9.10.20' // in a Hetzner range: a datacenter address, which the risk model scores
const OFFICE_RANGE = '5.9.10.0/24'
const STRANGER = '5.9.11.20'
const BASE_DIFFICULTY = 4
const RATE_LIMIT = 3

/** A script that makes no pretence of being a browser: the risk model blocks it anywhere else. */
const scriptHeaders = (siteKey: string, clientIp: string) => ({ 'x-site-key': siteKey, 'user-agent': 'python-requests/2.32.3', 'x-forwarded-for': clientIp })

/**
 * A site's address allowlist (settings.allowedAddresses): the operator's own addresses (an office,
 * an uptime monitor) pass at score 0 without being judged, as reCAPTCHA's IP allowlist does.
 */
describe.each(deployments)('an address allowlist on $name', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, env: { TRUST_PROXY: PROXY }, config: { rateLimitPerMinute: RATE_LIMIT } })
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account, { settings: { difficulty: BASE_DIFFICULTY } })
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  const updateSite = (body: object) => service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(account), payload: body })
  const requestChallenge = (clientIp: string) =>
    service.app.inject({ method: 'POST', url: '/api/v1/challenge', remoteAddress: PROXY, headers: scriptHeaders(site.siteKey, clientIp) })

  async function submitAsScript(clientIp: string, fingerprint: object = {}) {
    const issued = await requestChallenge(clientIp)
    expect(issued.statusCode).toBe(200)
    const challenge = issued.json<Challenge>()
    const payload = { challengeId: challenge.challengeId, nonce: solve(challenge), solveTimeMs: 0, fingerprint, behaviorData: {} }
    const verified = await service.app.inject({ method: 'POST', url: '/api/v1/verify', remoteAddress: PROXY, headers: scriptHeaders(site.siteKey, clientIp), payload })
    expect(verified.statusCode).toBe(200)
    return { challenge, result: verified.json<{ success: boolean; riskScore: number; action: string; token?: string }>() }
  }

  it.skipIf(!available)('is set through the API, normalized, and refused entry by entry when an entry is not an address', async () => {
    const refused = await updateSite({ settings: { allowedAddresses: ['203.0.113.0/24', 'office', '0.0.0.0/0'] } })
    expect(refused.statusCode).toBe(400)
    expect(refused.json<{ error: { code: string; details: { field: string }[] } }>().error).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'settings.allowedAddresses.1' }, { field: 'settings.allowedAddresses.2' }],
    })
    // A full list of IPv6 ranges (about 30 KB) is within the body limit of the sites' routes.
    const full = Array.from({ length: MAX_ALLOWED_ADDRESSES }, (_, index) => `2001:db8:${(index + 4096).toString(16)}:beef:cafe::/80`)
    const stored = await updateSite({ settings: { allowedAddresses: full } })
    expect(stored.statusCode).toBe(200)
    expect(stored.json<CreatedSite>().settings.allowedAddresses).toHaveLength(MAX_ALLOWED_ADDRESSES)
    const saved = await updateSite({ settings: { allowedAddresses: ['5.9.10.77/24', '2001:DB8::1'] } })
    expect(saved.statusCode).toBe(200)
    expect(saved.json<CreatedSite>().settings.allowedAddresses).toEqual([OFFICE_RANGE, '2001:db8::1'])
  })

  it.skipIf(!available)('allows a verification from an allowed address at score 0 without judging it, and Siteverify says so', async () => {
    const { challenge, result } = await submitAsScript(OFFICE)
    // The base difficulty: neither the datacenter address nor the history raise it.
    expect(challenge.difficulty).toBe(BASE_DIFFICULTY)
    expect(result).toMatchObject({ success: true, riskScore: 0, action: 'allow' })
    const redeemed = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response: result.token } })
    expect(redeemed.json()).toMatchObject({ success: true, riskScore: 0, action: 'allow', anomalies: [], metadata: { ephemeral_id: null } })
    // A browser in the office is named by its device, as anywhere else.
    const fromBrowser = (await submitAsScript(OFFICE, browserFingerprint)).result
    const itsAnswer = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response: fromBrowser.token } })
    expect(itsAnswer.json()).toMatchObject({ success: true, riskScore: 0, metadata: { ephemeral_id: expect.stringMatching(/^[0-9a-f]{24}$/) } })
    await service.app.verificationLog.flush()
    const [row] = await service.app.database.query<{ action: string; risk_score: number; client_ip: string }>(
      'SELECT action, risk_score, client_ip FROM verifications WHERE challenge_id = $1',
      [challenge.challengeId],
    )
    expect(row).toEqual({ action: 'allow', risk_score: 0, client_ip: OFFICE })
  })

  it.skipIf(!available)('judges every other address as ever', async () => {
    const { challenge, result } = await submitAsScript(STRANGER)
    expect(challenge.difficulty).toBeGreaterThan(BASE_DIFFICULTY)
    expect(result).toMatchObject({ success: false, action: 'block' })
  })

  it.skipIf(!available)("does not rate limit an allowed address, and limits it again once it is off the list", async () => {
    for (let request = 0; request <= RATE_LIMIT; request++) expect((await requestChallenge('5.9.10.21')).statusCode).toBe(200)
    expect((await updateSite({ settings: { allowedAddresses: null } })).json<CreatedSite>().settings.allowedAddresses).toEqual([])
    const statuses = []
    for (let request = 0; request <= RATE_LIMIT; request++) statuses.push((await requestChallenge('5.9.10.21')).statusCode)
    expect(statuses.at(-1)).toBe(429)
    expect((await submitAsScript(OFFICE)).result.action).toBe('block')
  })
})

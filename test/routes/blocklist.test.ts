import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import type { VerificationBlockedEvent } from '../../src/plugins/events.js'
import { browserHeaders, humanSubmission, wrongNonce } from '../helpers/core-flow.js'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { readLoggedVerification } from '../helpers/verification-rows.js'

/** The service sits behind a proxy on 127.0.0.1 (app.inject's default peer), which TRUST_PROXY names. */
const PROXY = '127.0.0.1'
const HOME_ADDRESS = '80.187.100.1' // Deutsche Telekom, DE: a person there scores 0
const HOME_RANGE = '80.187.100.0/24'
const NEIGHBOUR = '80.187.101.1' // DE too, outside the range
const MULLVAD = '185.65.134.1' // VPN, NL: a person there scores 20
const BASE_DIFFICULTY = 4

interface VerifyAnswer {
  success: boolean
  riskScore: number
  action: string
  token?: string
}

/**
 * A site's blocklist (settings.blockedAddresses, settings.blockedCountries): the visitors the
 * operator never wants are blocked at 100 once their proof of work checks out, as any block is.
 */
describe.each(deployments)('a site blocklist on $name', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  const events: VerificationBlockedEvent[] = []
  const listener = (event: VerificationBlockedEvent) => events.push(event)

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, env: { TRUST_PROXY: PROXY }, config: { rateLimitPerMinute: 0 } })
    service.app.events.on('verification.blocked', listener)
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account, { settings: { difficulty: BASE_DIFFICULTY } })
  })
  afterAll(async () => {
    if (!available) return
    service.app.events.off('verification.blocked', listener)
    await service.close()
  })

  const updateSite = async (settings: object) => {
    const response = await service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(account), payload: { settings } })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<CreatedSite>()
  }
  const headersFor = (clientIp: string) => ({ ...browserHeaders(site.siteKey), 'x-forwarded-for': clientIp })

  async function challengeFor(clientIp: string): Promise<Challenge> {
    const response = await service.app.inject({ method: 'POST', url: '/api/v1/challenge', remoteAddress: PROXY, headers: headersFor(clientIp) })
    expect(response.statusCode).toBe(200)
    return response.json<Challenge>()
  }

  /** A person's submission from the address: what the risk model alone would let through. */
  async function submitAsPerson(clientIp: string, nonce?: (challenge: Challenge) => string) {
    const challenge = await challengeFor(clientIp)
    const payload = humanSubmission(challenge, nonce?.(challenge))
    const response = await service.app.inject({ method: 'POST', url: '/api/v1/verify', remoteAddress: PROXY, headers: headersFor(clientIp), payload })
    return { challenge, response }
  }

  const logRowOf = (challengeId: string) => readLoggedVerification(service.app, challengeId)

  async function blockCount(): Promise<number> {
    const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
    return Number(/^tollgate_verifications_total\{action="block"\} (\d+)$/m.exec(text)?.[1] ?? 0)
  }

  it.skipIf(!available)('is set through the API, normalized, shown by GET, and refused entry by entry with field paths', async () => {
    const refused = await service.app.inject({
      method: 'PUT',
      url: `/api/v1/sites/${site.id}`,
      headers: asScript(account),
      payload: { settings: { blockedAddresses: ['203.0.113.0/24', 'hosting', '0.0.0.0/0'], blockedCountries: ['de', 'XX', 'ZZ'] } },
    })
    expect(refused.statusCode).toBe(400)
    expect(refused.json<{ error: { code: string; details: { field: string; message: string }[] } }>().error).toMatchObject({
      code: 'validation_error',
      details: [
        { field: 'settings.blockedAddresses.1', message: expect.stringContaining('"hosting"') },
        { field: 'settings.blockedAddresses.2', message: expect.stringContaining('wider than /8') },
        { field: 'settings.blockedCountries.1', message: expect.stringContaining('XX') },
        { field: 'settings.blockedCountries.2', message: expect.stringContaining('"ZZ"') },
      ],
    })
    const saved = await updateSite({ blockedAddresses: ['203.0.113.77/24', '2001:DB8::/32'], blockedCountries: ['ru', 'KP', 'RU'] })
    expect(saved.settings).toMatchObject({ blockedAddresses: ['203.0.113.0/24', '2001:db8::/32'], blockedCountries: ['KP', 'RU'] })
    const read = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}`, headers: asScript(account) })
    expect(read.json<CreatedSite>().settings).toMatchObject({ blockedAddresses: ['203.0.113.0/24', '2001:db8::/32'], blockedCountries: ['KP', 'RU'] })
    const emptied = await updateSite({ blockedAddresses: null, blockedCountries: [] })
    expect(emptied.settings).toMatchObject({ blockedAddresses: [], blockedCountries: [] })
  })

  it.skipIf(!available)('blocks a blocked address at 100 with address_blocked: no token, logged, counted and announced', async () => {
    await updateSite({ blockedAddresses: [HOME_RANGE], blockedCountries: null, allowedAddresses: null })
    events.length = 0
    const blocksBefore = await blockCount()
    const { challenge, response } = await submitAsPerson(HOME_ADDRESS)
    // The challenge is issued as to anyone: the verdict comes at the verification.
    expect(challenge.difficulty).toBe(BASE_DIFFICULTY)
    expect(response.statusCode).toBe(200)
    expect(response.json<VerifyAnswer>()).toEqual({ success: false, riskScore: 100, action: 'block' })
    expect(await logRowOf(challenge.challengeId)).toEqual({ action: 'block', risk_score: 100, anomalies: ['address_blocked'], country_code: 'DE', client_ip: HOME_ADDRESS })
    expect(events).toEqual([expect.objectContaining({ siteId: site.id, riskScore: 100, anomalies: ['address_blocked'], countryCode: 'DE' })])
    expect(await blockCount()).toBe(blocksBefore + 1)
    // Its neighbour, outside the range, is judged as ever.
    expect((await submitAsPerson(NEIGHBOUR)).response.json<VerifyAnswer>()).toMatchObject({ success: true, riskScore: 0, action: 'allow' })
  })

  it.skipIf(!available)('blocks a blocked country with country_blocked, and lets the others be judged', async () => {
    await updateSite({ blockedAddresses: null, blockedCountries: ['DE'], allowedAddresses: null })
    events.length = 0
    const { challenge, response } = await submitAsPerson(NEIGHBOUR)
    expect(response.json<VerifyAnswer>()).toEqual({ success: false, riskScore: 100, action: 'block' })
    expect(await logRowOf(challenge.challengeId)).toMatchObject({ action: 'block', risk_score: 100, anomalies: ['country_blocked'], country_code: 'DE' })
    expect(events).toEqual([expect.objectContaining({ anomalies: ['country_blocked'], countryCode: 'DE' })])
    // Both labels when both hold.
    await updateSite({ blockedAddresses: [HOME_RANGE] })
    const both = await submitAsPerson(HOME_ADDRESS)
    expect(await logRowOf(both.challenge.challengeId)).toMatchObject({ anomalies: ['address_blocked', 'country_blocked'], risk_score: 100 })
    // Another country is judged, its VPN counted as ever.
    const elsewhere = await submitAsPerson(MULLVAD)
    expect(elsewhere.response.json<VerifyAnswer>()).toMatchObject({ success: true, riskScore: 20, action: 'allow' })
    expect(await logRowOf(elsewhere.challenge.challengeId)).toMatchObject({ anomalies: ['vpn_detected'], country_code: 'NL' })
  })

  it.skipIf(!available)('matches the address X-Forwarded-For gives in IPv6 and IPv4-mapped form', async () => {
    await updateSite({ blockedAddresses: [HOME_RANGE, '2a01:4f8::/32'], blockedCountries: null, allowedAddresses: null })
    const mapped = await submitAsPerson('::ffff:80.187.100.31')
    expect(mapped.response.json<VerifyAnswer>()).toMatchObject({ action: 'block', riskScore: 100 })
    expect(await logRowOf(mapped.challenge.challengeId)).toMatchObject({ anomalies: ['address_blocked'], country_code: 'DE' })
    const ipv6 = await submitAsPerson('2a01:4f8::31')
    expect(ipv6.response.json<VerifyAnswer>()).toMatchObject({ action: 'block', riskScore: 100 })
    expect(await logRowOf(ipv6.challenge.challengeId)).toMatchObject({ anomalies: ['address_blocked'] })
    expect((await submitAsPerson('2a01:4f9::31')).response.json<VerifyAnswer>()).not.toMatchObject({ action: 'block' })
  })

  it.skipIf(!available)('lets the allowlist win over the blocklist', async () => {
    await updateSite({ blockedAddresses: [HOME_RANGE], blockedCountries: ['DE'], allowedAddresses: [HOME_ADDRESS] })
    const { response } = await submitAsPerson(HOME_ADDRESS)
    expect(response.json<VerifyAnswer>()).toMatchObject({ success: true, riskScore: 0, action: 'allow', token: expect.any(String) })
  })

  it.skipIf(!available)('still refuses a wrong proof of work from a blocked address with its error code, not a block', async () => {
    await updateSite({ blockedAddresses: [HOME_RANGE], blockedCountries: ['DE'], allowedAddresses: null })
    events.length = 0
    const { challenge, response } = await submitAsPerson(HOME_ADDRESS, wrongNonce)
    expect(response.statusCode).toBe(400)
    expect(response.json<{ error: { code: string } }>().error.code).toBe('solution_invalid')
    expect(await logRowOf(challenge.challengeId)).toMatchObject({ action: 'rejected', anomalies: [] })
    expect(events).toEqual([])
  })

  it.skipIf(!available)('still refuses an expired or a replayed challenge from a blocked address with its error code, not a block', async () => {
    await updateSite({ blockedAddresses: [HOME_RANGE], blockedCountries: ['DE'], allowedAddresses: null })
    // A lifetime shorter than the API's 10 s least, straight into storage.
    const setLifetime = async (challengeLifetimeSeconds: number) => {
      await service.app.sites.update(site.id, { settings: { challengeLifetimeSeconds } })
      await service.app.siteCache.invalidate({ id: site.id })
    }
    await setLifetime(1)
    events.length = 0
    const address = '80.187.100.21' // its own history: the earlier tests' blocks are not its
    const expired = await challengeFor(address)
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    const late = await service.app.inject({ method: 'POST', url: '/api/v1/verify', remoteAddress: PROXY, headers: headersFor(address), payload: humanSubmission(expired) })
    expect(late.statusCode).toBe(400)
    expect(late.json<{ error: { code: string } }>().error.code).toBe('challenge_expired')
    await setLifetime(120)
    const { challenge, response } = await submitAsPerson(address)
    expect(response.json<VerifyAnswer>()).toMatchObject({ action: 'block' })
    const replay = await service.app.inject({ method: 'POST', url: '/api/v1/verify', remoteAddress: PROXY, headers: headersFor(address), payload: humanSubmission(challenge) })
    expect(replay.statusCode).toBe(400)
    expect(replay.json<{ error: { code: string } }>().error.code).toBe('challenge_invalid')
    // Only the one verification whose proof of work checked out was blocked.
    expect(events).toHaveLength(1)
  })

  it.skipIf(!available)("counts its blocks in the client's history: the next challenges are harder, as after any two blocks", async () => {
    await updateSite({ blockedAddresses: [HOME_RANGE], blockedCountries: null, allowedAddresses: null })
    const address = '80.187.100.66' // its own history: the earlier tests' blocks are not its
    for (let round = 0; round < 2; round++) {
      const { challenge, response } = await submitAsPerson(address)
      expect(challenge.difficulty).toBe(BASE_DIFFICULTY)
      expect(response.json<VerifyAnswer>()).toMatchObject({ action: 'block' })
    }
    // recent_blocks: +2 bits while blocked, and once unblocked, 30 points at the verification.
    expect((await challengeFor(address)).difficulty).toBe(BASE_DIFFICULTY + 2)
    await updateSite({ blockedAddresses: null })
    const { challenge, response } = await submitAsPerson(address)
    expect(challenge.difficulty).toBe(BASE_DIFFICULTY + 2)
    expect(response.json<VerifyAnswer>()).toMatchObject({ riskScore: 30, action: 'allow' })
    expect(await logRowOf(challenge.challengeId)).toMatchObject({ anomalies: ['recent_blocks'] })
  })

  it.skipIf(!available)('changes nothing while its lists are empty', async () => {
    const emptied = await updateSite({ blockedAddresses: [], blockedCountries: null, allowedAddresses: null })
    expect(emptied.settings).toMatchObject({ blockedAddresses: [], blockedCountries: [], allowedAddresses: [] })
    // An address the earlier tests did not block: HOME_ADDRESS's blocks count in its history.
    const { challenge, response } = await submitAsPerson('80.187.100.2')
    expect(response.json<VerifyAnswer>()).toMatchObject({ success: true, riskScore: 0, action: 'allow', token: expect.any(String) })
    expect(await logRowOf(challenge.challengeId)).toMatchObject({ action: 'allow', anomalies: [], country_code: 'DE' })
  })
})

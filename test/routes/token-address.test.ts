import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import type { TokenAddressCheck } from '../../src/domain/token/address-binding.js'
import { browserHeaders, humanSubmission } from '../helpers/core-flow.js'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

/** The service sits behind a proxy on 127.0.0.1 (app.inject's default peer), which TRUST_PROXY names. */
const PROXY = '127.0.0.1'

interface Answer {
  success: boolean
  'error-codes': string[]
  remoteipMatch?: boolean | null
}

/** Claims in a token's payload. */
function claimCount(token: string): number {
  return (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as unknown[]).length
}

/**
 * settings.tokenAddressCheck: a site's tokens say where they were earned, and Siteverify compares
 * that with the remoteip its backend sends (report), or refuses a token of another address (refuse).
 */
describe.each(deployments.filter(({ available }) => available))("Tokens' addresses on $name", ({ options }) => {
  let service: TestApp
  let account: TestAccount
  const sites: Partial<Record<TokenAddressCheck, CreatedSite>> = {}

  beforeAll(async () => {
    service = await buildTestApp({ ...options, env: { TRUST_PROXY: PROXY }, config: { rateLimitPerMinute: 0 } })
    account = await createTestAccount(service.app)
    for (const check of ['off', 'report', 'refuse'] as const) {
      sites[check] = await createTestSite(service.app, account, { settings: { difficulty: 4, tokenAddressCheck: check } })
    }
  })
  afterAll(() => service.close())

  const siteOf = (check: TokenAddressCheck): CreatedSite => {
    const site = sites[check]
    if (site === undefined) throw new Error(`no ${check} site`)
    return site
  }

  /** A token the visitor at `address` earned on the site's page, behind the proxy. */
  async function tokenEarnedAt(site: CreatedSite, address: string): Promise<string> {
    const headers = { ...browserHeaders(site.siteKey), 'x-forwarded-for': address }
    const challenge = (await service.app.inject({ method: 'POST', url: '/api/v1/challenge', remoteAddress: PROXY, headers })).json<Challenge>()
    const verified = await service.app.inject({ method: 'POST', url: '/api/v1/verify', remoteAddress: PROXY, headers, payload: humanSubmission(challenge) })
    const { token } = verified.json<{ token?: string }>()
    if (token === undefined) throw new Error(`no token: ${verified.body}`)
    return token
  }

  const siteverify = async (path: string, payload: Record<string, string>): Promise<Answer> => {
    const response = await service.app.inject({ method: 'POST', url: path, payload })
    expect(response.statusCode).toBe(200)
    return response.json<Answer>()
  }

  /** The value of a metric line of /metrics that starts with `series` (0 when absent). */
  const metricValue = async (series: string): Promise<number> => {
    const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `))
    return line === undefined ? 0 : Number(line.split(' ')[1])
  }

  it("says whether the backend's remoteip is where the token was earned, under report, and redeems it either way, counting the mismatches", async () => {
    const site = siteOf('report')
    const secret = site.secretKey
    const reportedBefore = await metricValue('tollgate_siteverify_remoteip_mismatch_reported_total')
    expect(await siteverify('/api/v1/siteverify', { secret, response: await tokenEarnedAt(site, '80.187.1.10'), remoteip: '80.187.1.10' })).toMatchObject({ success: true, remoteipMatch: true })
    // A phone on one IPv6 /64 that changed its address between the page and the form.
    const ipv6 = await tokenEarnedAt(site, '2a01:598:1:2::10')
    expect(await siteverify('/turnstile/v0/siteverify', { secret, response: ipv6, remoteip: '2a01:598:1:2:abcd::7' })).toMatchObject({ success: true, remoteipMatch: true })
    // Farmed at one address, sent from another.
    expect(await siteverify('/siteverify', { secret, response: await tokenEarnedAt(site, '80.187.1.10'), remoteip: '91.64.22.7' })).toMatchObject({ success: true, remoteipMatch: false })
    // Nothing to compare: no remoteip, or the other family (a dual-stack visitor).
    expect(await siteverify('/api/v1/siteverify', { secret, response: await tokenEarnedAt(site, '80.187.1.10') })).toMatchObject({ success: true, remoteipMatch: null })
    expect(await siteverify('/api/v1/siteverify', { secret, response: await tokenEarnedAt(site, '80.187.1.10'), remoteip: '2a01:598:1:2::10' })).toMatchObject({ success: true, remoteipMatch: null })

    // The one mismatch, beside the five redemptions, for the operator to weigh before refusing.
    expect(await metricValue('tollgate_siteverify_remoteip_mismatch_reported_total')).toBe(reportedBefore + 1)
    await service.app.siteverifyCounts.flush()
    const stats = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/stats`, headers: asScript(account) })
    expect(stats.json<{ siteverify: object }>().siteverify).toMatchObject({ redeemed: 5, redeemedFromOtherAddress: 1, refused: [] })
  })

  it('refuses a token sent from another address under refuse, on every path, without spending it, and counts why', async () => {
    const site = siteOf('refuse')
    const secret = site.secretKey
    const metric = () => metricValue('tollgate_siteverify_total{result="remoteip-mismatch"}')
    const before = await metric()
    const token = await tokenEarnedAt(site, '80.187.1.10')
    expect(await siteverify('/api/v1/siteverify', { secret, response: token, remoteip: '91.64.22.7' })).toMatchObject({
      success: false, 'error-codes': ['invalid-input-response'], remoteipMatch: null,
    })
    expect(await siteverify('/turnstile/v0/siteverify', { secret, response: token, remoteip: '91.64.22.7' })).toEqual({ success: false, 'error-codes': ['invalid-input-response'], messages: [] })
    expect(await siteverify('/recaptcha/api/siteverify', { secret, response: token, remoteip: '91.64.22.7' })).toEqual({ success: false, 'error-codes': ['invalid-input-response'] })
    // Unspent: the visitor's own address redeems it, once.
    expect(await siteverify('/api/v1/siteverify', { secret, response: token, remoteip: '80.187.1.10' })).toMatchObject({ success: true, remoteipMatch: true })
    expect(await siteverify('/api/v1/siteverify', { secret, response: token, remoteip: '80.187.1.10' })).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    // A backend that sends no remoteip is not checked.
    expect(await siteverify('/api/v1/siteverify', { secret, response: await tokenEarnedAt(site, '80.187.1.10') })).toMatchObject({ success: true, remoteipMatch: null })
    expect(await metric()).toBe(before + 3)

    await service.app.siteverifyCounts.flush()
    const stats = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/stats`, headers: asScript(account) })
    expect(stats.json<{ siteverify: { refused: { errorCode: string; count: number }[] } }>().siteverify.refused).toContainEqual({ errorCode: 'remoteip-mismatch', count: 3 })
    // Refused, not redeemed: none counted as reported.
    expect(stats.json<{ siteverify: object }>().siteverify).toMatchObject({ redeemedFromOtherAddress: 0 })
  })

  it('keeps tokens of a site that does not check as they were, and follows a change of the setting', async () => {
    const site = siteOf('off')
    const token = await tokenEarnedAt(site, '80.187.1.10')
    // Nine claims, the store's epoch, the page's action and data and the device: no address.
    expect(claimCount(token)).toBe(13)
    expect(await siteverify('/api/v1/siteverify', { secret: site.secretKey, response: token, remoteip: '91.64.22.7' })).toMatchObject({ success: true, remoteipMatch: null })

    const changed = await service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(account), payload: { settings: { tokenAddressCheck: 'refuse' } } })
    expect(changed.statusCode, changed.body).toBe(200)
    const bound = await tokenEarnedAt(site, '80.187.1.10')
    expect(claimCount(bound)).toBe(14)
    expect(await siteverify('/api/v1/siteverify', { secret: site.secretKey, response: bound, remoteip: '91.64.22.7' })).toMatchObject({ success: false, 'error-codes': ['invalid-input-response'] })
  })
})

describe('EPHEMERAL_IDS=false (the earliest token format, for a rolling upgrade)', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp({ env: { EPHEMERAL_IDS: 'false' } })
  })
  afterAll(() => service.close())

  it("leaves the address out of a refusing site's tokens: every earlier release reads them, and Siteverify cannot compare", async () => {
    const account = await createTestAccount(service.app)
    const site = await createTestSite(service.app, account, { settings: { difficulty: 4, tokenAddressCheck: 'refuse' } })
    const headers = browserHeaders(site.siteKey)
    const challenge = (await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers })).json<Challenge>()
    const { token = '' } = (await service.app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: humanSubmission(challenge) })).json<{ token?: string }>()
    expect(claimCount(token)).toBe(9)
    const answer = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response: token, remoteip: '91.64.22.7' } })
    expect(answer.json()).toMatchObject({ success: true, remoteipMatch: null })
  })
})

import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CLOCK_SKEW_MARGIN_MS, redeemToken, redeemTokenOfSite, type RedeemTokenDependencies, type SiteverifyRequest } from '../../../src/domain/siteverify/redeem-token.js'
import { testSecrets } from '../../../src/domain/siteverify/test-secrets.js'
import { generateSecretKey, generateSiteKey, hashSecretKey } from '../../../src/domain/sites/site-keys.js'
import { addressClaimOf, type TokenAddressCheck } from '../../../src/domain/token/address-binding.js'
import { issueToken, TOKEN_LIFETIME_MS, type TokenClaims } from '../../../src/domain/token/token.js'
import { openMemoryStore } from '../../../src/storage/memory/memory-store.js'
import type { KeyValueStore } from '../../../src/storage/ports.js'

const tokenKey = Buffer.alloc(32, 9)
const issuedAt = 1_767_225_600_000

function makeSite() {
  const secretKey = generateSecretKey()
  return { id: randomUUID(), siteKey: generateSiteKey(), secretKey, secretKeyHash: hashSecretKey(secretKey), previousSecrets: [], settings: { tokenAddressCheck: 'off' as TokenAddressCheck } }
}

describe('redeemToken', () => {
  const siteA = makeSite()
  const siteB = makeSite()
  let now = issuedAt + 1_000
  let store: KeyValueStore
  beforeEach(() => {
    now = issuedAt + 1_000
    store = openMemoryStore({ now: () => now })
  })
  afterEach(() => store.close())

  const claimsFor = (site: { id: string; siteKey: string }): TokenClaims => ({
    siteId: site.id,
    siteKey: site.siteKey,
    challengeId: randomUUID(),
    action: 'allow',
    riskScore: 20,
    anomalies: ['no_interaction'],
    hostname: 'shop.example.com',
    countryCode: 'XX',
    issuedAt,
    dataEpoch: null,
    pageAction: null,
    cData: null,
    ephemeralId: '5d41402abc4b2a76b9719d91',
    address: null,
  })
  const dependencies = (): RedeemTokenDependencies => ({
    store,
    tokenKey,
    findSite: async (siteKey) => [siteA, siteB].find((site) => site.siteKey === siteKey),
    remembersRedemptionsSince: () => 0,
    dataEpoch: () => store.dataEpoch(),
    isStorageDown: async () => (await store.ping().then(() => false, () => true)),
    claimAddress: (ip) => addressClaimOf(ip, (group) => `tag(${group})`),
  })
  const redeem = (request: SiteverifyRequest) => redeemToken(dependencies(), request, now)

  it('refuses a token issued before the store began to remember redemptions (an in-process store after a restart)', async () => {
    const response = issueToken(tokenKey, claimsFor(siteA))
    const restarted = { ...dependencies(), remembersRedemptionsSince: () => issuedAt + 1 }
    expect(await redeemToken(restarted, { secret: siteA.secretKey, response }, now)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    // Its secret is still checked first.
    expect(await redeemToken(restarted, { secret: siteB.secretKey, response }, now)).toMatchObject({ 'error-codes': ['invalid-input-secret'] })
    const fresh = { ...dependencies(), remembersRedemptionsSince: () => issuedAt }
    expect(await redeemToken(fresh, { secret: siteA.secretKey, response }, now)).toMatchObject({ success: true })
  })

  it('judges a token that carries a data epoch by it, not by its issue time: another epoch, or none known yet, is refused', async () => {
    const epoch = issuedAt + 60_000
    const issuedUnder = (dataEpoch: number) => issueToken(tokenKey, { ...claimsFor(siteA), dataEpoch })
    // Issued under the epoch the store has now, though before remembersSince (the epoch after a loss lies the clock-skew margin ahead).
    const lostSince = { ...dependencies(), remembersRedemptionsSince: () => epoch, dataEpoch: () => epoch }
    expect(await redeemToken(lostSince, { secret: siteA.secretKey, response: issuedUnder(epoch) }, now)).toMatchObject({ success: true })
    // Issued under the epoch before the loss, though after remembersSince (a clock behind cannot make it pass).
    const stale = { ...dependencies(), remembersRedemptionsSince: () => 0, dataEpoch: () => epoch }
    expect(await redeemToken(stale, { secret: siteA.secretKey, response: issuedUnder(epoch - 1) }, now)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    // The store has not read its epoch since it connected.
    const unread = { ...dependencies(), dataEpoch: () => undefined }
    expect(await redeemToken(unread, { secret: siteA.secretKey, response: issuedUnder(epoch) }, now)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
  })

  it('answers success with the token\'s facts', async () => {
    const claims = claimsFor(siteA)
    const response = issueToken(tokenKey, claims)
    expect(await redeem({ secret: siteA.secretKey, response })).toEqual({
      success: true,
      challenge_ts: '2026-01-01T00:00:00.000Z',
      hostname: 'shop.example.com',
      'error-codes': [],
      action: 'allow',
      recommendedAction: 'allow',
      cdata: null,
      riskScore: 20,
      score: 0.8,
      anomalies: ['no_interaction'],
      countryCode: 'XX',
      remoteipMatch: null,
      metadata: { ephemeral_id: '5d41402abc4b2a76b9719d91', verification_id: claims.challengeId },
    })
  })

  it('accepts the secret key a rotation replaced until its grace period ends, and not after', async () => {
    const previousKey = generateSecretKey()
    const rotated = { ...makeSite(), previousSecrets: [{ keyHash: hashSecretKey(previousKey), expiresAt: new Date(now + 1_000) }] }
    const withRotated: RedeemTokenDependencies = { ...dependencies(), findSite: async () => rotated }
    const first = issueToken(tokenKey, claimsFor(rotated))
    expect(await redeemToken(withRotated, { secret: previousKey, response: first }, now)).toMatchObject({ success: true })
    const second = issueToken(tokenKey, claimsFor(rotated))
    expect(await redeemToken(withRotated, { secret: previousKey, response: second }, now + 1_000)).toMatchObject({
      success: false,
      'error-codes': ['invalid-input-secret'],
    })
    // The refusal did not spend the token: the current key still redeems it.
    expect(await redeemToken(withRotated, { secret: rotated.secretKey, response: second }, now + 1_000)).toMatchObject({ success: true })
  })

  it('redeems a token once', async () => {
    const response = issueToken(tokenKey, claimsFor(siteA))
    expect((await redeem({ secret: siteA.secretKey, response })).success).toBe(true)
    expect(await redeem({ secret: siteA.secretKey, response })).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
  })

  it('gives a retry with the same idempotency key the first answer, and another key a duplicate', async () => {
    const response = issueToken(tokenKey, claimsFor(siteA))
    const first = await redeem({ secret: siteA.secretKey, response, idempotency_key: 'a1b2' })
    now += 5_000
    expect(await redeem({ secret: siteA.secretKey, response, idempotency_key: 'a1b2' })).toEqual(first)
    expect(await redeem({ secret: siteA.secretKey, response, idempotency_key: 'c3d4' })).toMatchObject({ 'error-codes': ['timeout-or-duplicate'] })
    expect(await redeem({ secret: siteA.secretKey, response })).toMatchObject({ 'error-codes': ['timeout-or-duplicate'] })
  })

  it('gives a retry with the first call\'s idempotency key the first answer even after the token has expired', async () => {
    const response = issueToken(tokenKey, claimsFor(siteA))
    const first = await redeem({ secret: siteA.secretKey, response, idempotency_key: 'a1b2' })
    expect(first.success).toBe(true)
    now = issuedAt + TOKEN_LIFETIME_MS + 30_000
    expect(await redeem({ secret: siteA.secretKey, response, idempotency_key: 'a1b2' })).toEqual(first)
    expect(await redeem({ secret: siteA.secretKey, response, idempotency_key: 'c3d4' })).toMatchObject({ 'error-codes': ['timeout-or-duplicate'] })
  })

  it('redeems once across instances whose clocks differ by up to a minute', async () => {
    const response = issueToken(tokenKey, claimsFor(siteA))
    // `now` is the shared store's clock (Redis's); one instance agrees with it, the other runs 50 s behind.
    expect((await redeemToken(dependencies(), { secret: siteA.secretKey, response }, now)).success).toBe(true)
    now = issuedAt + TOKEN_LIFETIME_MS + 40_000
    const behind = now - 50_000
    expect(await redeemToken(dependencies(), { secret: siteA.secretKey, response }, behind)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
  })

  it('refuses a token stamped more than the clock-skew margin ahead of the store\'s clock, and takes one within it', async () => {
    // Stamped by a clock running ahead (an instance of a release that stamped tokens by its own
    // clock): taken, it would stay valid for longer than its lifetime.
    now = issuedAt - CLOCK_SKEW_MARGIN_MS - 1
    expect(await redeem({ secret: siteA.secretKey, response: issueToken(tokenKey, claimsFor(siteA)) })).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    now = issuedAt - CLOCK_SKEW_MARGIN_MS
    expect((await redeem({ secret: siteA.secretKey, response: issueToken(tokenKey, claimsFor(siteA)) })).success).toBe(true)
  })

  it('keeps the marker of a token stamped ahead of the store\'s clock until the token expires by that clock', async () => {
    const response = issueToken(tokenKey, claimsFor(siteA))
    now = issuedAt - 50_000
    expect((await redeem({ secret: siteA.secretKey, response })).success).toBe(true)
    now = issuedAt + TOKEN_LIFETIME_MS - 1
    expect(await redeem({ secret: siteA.secretKey, response })).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
  })

  it('refuses an expired token as timeout-or-duplicate', async () => {
    const response = issueToken(tokenKey, claimsFor(siteA))
    now = issuedAt + TOKEN_LIFETIME_MS
    expect(await redeem({ secret: siteA.secretKey, response })).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
  })

  it('names what is missing', async () => {
    expect(await redeem({})).toMatchObject({ success: false, 'error-codes': ['missing-input-secret', 'missing-input-response'] })
    expect(await redeem({ secret: siteA.secretKey })).toMatchObject({ 'error-codes': ['missing-input-response'] })
    expect(await redeem({ response: 'v1.x.y' })).toMatchObject({ 'error-codes': ['missing-input-secret'] })
  })

  it('refuses a forged or mangled token as invalid-input-response', async () => {
    const response = issueToken(tokenKey, claimsFor(siteA))
    expect(await redeem({ secret: siteA.secretKey, response: response.slice(0, -2) + 'AA' })).toMatchObject({ 'error-codes': ['invalid-input-response'] })
    expect(await redeem({ secret: siteA.secretKey, response: issueToken(Buffer.alloc(32, 1), claimsFor(siteA)) })).toMatchObject({
      'error-codes': ['invalid-input-response'],
    })
  })

  it('refuses a wrong secret as invalid-input-secret without spending the token', async () => {
    const response = issueToken(tokenKey, claimsFor(siteA))
    expect(await redeem({ secret: generateSecretKey(), response })).toMatchObject({ success: false, 'error-codes': ['invalid-input-secret'] })
    expect(await redeem({ secret: 'not-a-secret', response })).toMatchObject({ 'error-codes': ['invalid-input-secret'] })
    expect((await redeem({ secret: siteA.secretKey, response })).success).toBe(true)
  })

  it('refuses site A\'s token with site B\'s secret as invalid-input-secret', async () => {
    const response = issueToken(tokenKey, claimsFor(siteA))
    expect(await redeem({ secret: siteB.secretKey, response })).toMatchObject({ success: false, 'error-codes': ['invalid-input-secret'] })
  })

  it('checks sitekey when it is sent', async () => {
    const response = issueToken(tokenKey, claimsFor(siteA))
    expect(await redeem({ secret: siteA.secretKey, response, sitekey: siteB.siteKey })).toMatchObject({ 'error-codes': ['invalid-input-response'] })
    expect((await redeem({ secret: siteA.secretKey, response, sitekey: siteA.siteKey })).success).toBe(true)
  })

  describe("the token's address (settings.tokenAddressCheck)", () => {
    const earnedAt = (ip: string) => addressClaimOf(ip, (group) => `tag(${group})`) ?? null
    const checking = (check: TokenAddressCheck) => {
      const site = { ...makeSite(), settings: { tokenAddressCheck: check } }
      const deps: RedeemTokenDependencies = { ...dependencies(), findSite: async (siteKey) => (siteKey === site.siteKey ? site : undefined) }
      const tokenFrom = (ip: string | null) => issueToken(tokenKey, { ...claimsFor(site), address: ip === null ? null : earnedAt(ip) })
      return { site, redeemAs: (request: SiteverifyRequest) => redeemTokenOfSite(deps, { secret: site.secretKey, ...request }, now), tokenFrom }
    }

    it('answers whether remoteip is in the address group that earned the token: the IPv4 address, the IPv6 /64', async () => {
      const { redeemAs, tokenFrom } = checking('report')
      expect((await redeemAs({ response: tokenFrom('203.0.113.7'), remoteip: '203.0.113.7' })).answer).toMatchObject({ success: true, remoteipMatch: true })
      expect((await redeemAs({ response: tokenFrom('203.0.113.7'), remoteip: '::ffff:203.0.113.7' })).answer).toMatchObject({ success: true, remoteipMatch: true })
      expect((await redeemAs({ response: tokenFrom('2001:db8:1:2::1'), remoteip: '2001:db8:1:2:abcd::9' })).answer).toMatchObject({ success: true, remoteipMatch: true })
      // Under report, another address is said, and the token is redeemed all the same.
      const elsewhere = await redeemAs({ response: tokenFrom('203.0.113.7'), remoteip: '203.0.113.8' })
      expect(elsewhere).toMatchObject({ answer: { success: true, remoteipMatch: false } })
      expect(elsewhere.reason).toBeUndefined()
      expect((await redeemAs({ response: tokenFrom('2001:db8:1:2::1'), remoteip: '2001:db8:1:3::1' })).answer).toMatchObject({ success: true, remoteipMatch: false })
    })

    it('says nothing without remoteip, for another family, for text that is no address, or for a token without the claim', async () => {
      const { redeemAs, tokenFrom } = checking('refuse')
      for (const [earned, remoteip] of [['203.0.113.7', undefined], ['203.0.113.7', ''], ['203.0.113.7', '2001:db8::1'], ['2001:db8::1', '203.0.113.7'], ['203.0.113.7', 'unknown'], [null, '198.51.100.1']] as const) {
        expect((await redeemAs({ response: tokenFrom(earned), remoteip })).answer, `${earned} / ${remoteip}`).toMatchObject({ success: true, remoteipMatch: null })
      }
    })

    it('refuses a token of another address under refuse without spending it, counted as the address', async () => {
      const { site, redeemAs, tokenFrom } = checking('refuse')
      const response = tokenFrom('203.0.113.7')
      expect(await redeemAs({ response, remoteip: '198.51.100.1' })).toEqual({
        answer: expect.objectContaining({ success: false, 'error-codes': ['invalid-input-response'], remoteipMatch: null, hostname: null }),
        countedFor: site.id,
        reason: 'address-mismatch',
      })
      // Still unspent: the visitor's own address redeems it, once.
      expect((await redeemAs({ response, remoteip: '203.0.113.7' })).answer).toMatchObject({ success: true, remoteipMatch: true })
      expect((await redeemAs({ response, remoteip: '203.0.113.7' })).answer).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
      // An expired token of another address is expired first.
      const expired = tokenFrom('203.0.113.7')
      now = issuedAt + TOKEN_LIFETIME_MS
      expect(await redeemAs({ response: expired, remoteip: '198.51.100.1' })).toMatchObject({ answer: { 'error-codes': ['timeout-or-duplicate'] }, reason: 'expired' })
    })

    it("judges by the site's setting now: a token issued under refuse redeems from anywhere once the site reports only", async () => {
      const { site, redeemAs, tokenFrom } = checking('refuse')
      const response = tokenFrom('203.0.113.7')
      site.settings.tokenAddressCheck = 'report'
      expect((await redeemAs({ response, remoteip: '198.51.100.1' })).answer).toMatchObject({ success: true, remoteipMatch: false })
    })
  })

  it('refuses the token of a deleted site', async () => {
    const response = issueToken(tokenKey, claimsFor(makeSite()))
    expect(await redeem({ secret: siteA.secretKey, response })).toMatchObject({ 'error-codes': ['invalid-input-response'] })
  })

  it("answers a passing test secret with the page's action, cData and hostname of a test site key's token, without spending it", async () => {
    const testSite = { id: '00000000-0000-4000-8000-0000000000a1', siteKey: '1x00000000000000000000AA' }
    const response = issueToken(tokenKey, { ...claimsFor(testSite), pageAction: 'login', cData: 'session-42' })
    const passing = { success: true, hostname: 'shop.example.com', action: 'login', recommendedAction: 'allow', cdata: 'session-42', riskScore: 0, anomalies: [] }
    for (const secret of [testSecrets.alwaysPasses, testSecrets.recaptchaPasses, testSecrets.hcaptchaPasses]) {
      expect(await redeem({ secret, response })).toMatchObject(passing)
    }
    expect(await redeem({ secret: testSecrets.alwaysPasses, response: issueToken(tokenKey, claimsFor(testSite)) })).toMatchObject({ action: 'allow', cdata: null })
    // Its age does not matter to a test secret, as no response's does.
    now = issuedAt + TOKEN_LIFETIME_MS + 1
    expect(await redeem({ secret: testSecrets.alwaysPasses, response })).toMatchObject(passing)
    now = issuedAt + 1_000
    // Anything else keeps the fixed answer: an altered token, and a real site's token, so that a
    // backend shipped with a test secret fails its hostname and action checks for every visitor.
    const fixed = { success: true, hostname: 'example.com', action: 'allow', cdata: null }
    expect(await redeem({ secret: testSecrets.alwaysPasses, response: 'XXXX.DUMMY.TOKEN.XXXX' })).toMatchObject(fixed)
    expect(await redeem({ secret: testSecrets.alwaysPasses, response: `${response.slice(0, -1)}${response.endsWith('A') ? 'B' : 'A'}` })).toMatchObject(fixed)
    const realSites = issueToken(tokenKey, { ...claimsFor(siteA), pageAction: 'login', cData: 'session-42' })
    expect(await redeem({ secret: testSecrets.alwaysPasses, response: realSites })).toMatchObject(fixed)
    expect(await redeem({ secret: siteA.secretKey, response: realSites })).toMatchObject({ success: true, action: 'login' })
  })

  it("answers each vendor's passing test secret with that vendor's dummy hostname for a response that is no test site key's token", async () => {
    // The hostnames the vendors' own test secrets answer, which backend libraries accept for them.
    const dummyHostnames = [
      [testSecrets.alwaysPasses, 'example.com'],
      [testSecrets.recaptchaPasses, 'testkey.google.com'],
      [testSecrets.hcaptchaPasses, 'dummy-key-pass'],
    ] as const
    const realSites = issueToken(tokenKey, { ...claimsFor(siteA), pageAction: 'login', cData: 'session-42' })
    for (const [secret, hostname] of dummyHostnames) {
      for (const response of ['XXXX.DUMMY.TOKEN.XXXX', realSites]) {
        expect(await redeem({ secret, response }), secret).toMatchObject({ success: true, hostname, action: 'allow', cdata: null })
      }
    }
  })

  it('answers the documented test secrets for any response, as often as asked', async () => {
    for (let round = 0; round < 2; round++) {
      expect(await redeem({ secret: testSecrets.alwaysPasses, response: 'XXXX.DUMMY.TOKEN.XXXX' })).toMatchObject({ success: true, 'error-codes': [] })
      expect(await redeem({ secret: testSecrets.alwaysFails, response: 'XXXX.DUMMY.TOKEN.XXXX' })).toMatchObject({
        success: false,
        'error-codes': ['invalid-input-response'],
      })
      expect(await redeem({ secret: testSecrets.alwaysDuplicate, response: 'XXXX.DUMMY.TOKEN.XXXX' })).toMatchObject({
        success: false,
        'error-codes': ['timeout-or-duplicate'],
      })
    }
  })
})

import { defaultSiteSettings, type Site } from './site.js'

/**
 * Documented test site keys, Cloudflare Turnstile's strings, for a site's own automated tests (a
 * headless browser in CI scores as the bot it is): a page using one gets a real challenge at 1 bit
 * (the network's and the history's extra bits apply as for any site), and its submission always passes or is always blocked, whatever the signals.
 * The token of one that passes redeems only with a test secret: with any real secret Siteverify
 * answers invalid-input-response, as for a token of a site that does not exist. They work in
 * every environment, from any origin, and leave nothing in any site's log, analytics or webhooks;
 * knowing them grants nothing.
 */
export type TestSiteOutcome = 'allow' | 'block'

/** The test site key of each outcome that scripts and documents name (Turnstile's "always passes" and "always blocks"). */
export const testSiteKeys = {
  alwaysPasses: '1x00000000000000000000AA',
  alwaysBlocked: '2x00000000000000000000AB',
} as const

const definitions: [siteKey: string, id: string, outcome: TestSiteOutcome][] = [
  [testSiteKeys.alwaysPasses, '00000000-0000-4000-8000-0000000000a1', 'allow'],
  ['1x00000000000000000000BB', '00000000-0000-4000-8000-0000000000b1', 'allow'],
  [testSiteKeys.alwaysBlocked, '00000000-0000-4000-8000-0000000000a2', 'block'],
  ['2x00000000000000000000BB', '00000000-0000-4000-8000-0000000000b2', 'block'],
]

const epoch = new Date(0)
const sitesByKey = new Map<string, Site>()
const outcomesById = new Map<string, TestSiteOutcome>()
for (const [siteKey, id, outcome] of definitions) {
  sitesByKey.set(siteKey, {
    id,
    accountId: null,
    name: `Test site key (always ${outcome === 'allow' ? 'passes' : 'blocked'})`,
    siteKey,
    // No secret key matches: test tokens redeem with the test secrets only.
    secretKeyHash: '',
    previousSecrets: [],
    domains: [],
    settings: { ...defaultSiteSettings, difficulty: 1 },
    webhookSecretCiphertext: null,
    previousWebhookSecret: null,
    secretRotatedAt: null,
    createdAt: epoch,
    updatedAt: epoch,
    revision: '1',
  })
  outcomesById.set(id, outcome)
}

/**
 * The other vendors' public test site keys, which a page moved to Tollgate may still carry in its
 * browser tests: each is the always-passing key's alias, so that its token redeems with the vendor's
 * test secret as before. Turnstile's 3x…FF forces an interactive challenge there, which a test
 * passes by ticking the box; Tollgate has no box to tick, so it passes. hCaptcha's Enterprise "bot
 * detected" key (30000000-…-000000000003) is left out: hCaptcha answers it with a success and a bad
 * score, which no Tollgate verdict matches. They share the map that every request reads already,
 * so they cost no lookup; their tokens name the always-passing key as their site's.
 */
const vendorAliases = [
  '3x00000000000000000000FF',
  '6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI',
  '10000000-ffff-ffff-ffff-000000000001',
  '20000000-ffff-ffff-ffff-000000000002',
]
const alwaysPassing = sitesByKey.get(testSiteKeys.alwaysPasses)
for (const siteKey of vendorAliases) if (alwaysPassing !== undefined) sitesByKey.set(siteKey, alwaysPassing)

/** The stand-in site of a test site key (or a vendor's, its alias), or undefined for any other key. */
export function testSiteFor(siteKey: string): Site | undefined {
  return sitesByKey.get(siteKey)
}

/** What every submission for this site gets when it is a test site key's, else undefined. */
export function testOutcomeOf(siteId: string): TestSiteOutcome | undefined {
  return outcomesById.get(siteId)
}

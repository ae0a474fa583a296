import { isBlockedResponse } from '../../../sdk/src/compat/blocked-response.js'
import type { KeyValueStore } from '../../storage/ports.js'
import type { MacKey } from '../mac.js'
import { acceptsSecretKey, isReplacedSecretKey, type SecretKeyHolder } from '../sites/site-keys.js'
import type { SiteSettings } from '../sites/site.js'
import { matchesAddressClaim, refusesAddress } from '../token/address-binding.js'
import { readToken, type TokenClaims } from '../token/token.js'
import { answerFailure, answerSuccess, type SiteverifyAnswer } from './siteverify-answer.js'
import { answerTestSecret } from './test-secrets.js'

export interface SiteverifyRequest {
  secret?: string
  response?: string
  remoteip?: string
  idempotency_key?: string
  sitekey?: string
}

export interface RedeemingSite extends SecretKeyHolder {
  id: string
  siteKey: string
  settings: Pick<SiteSettings, 'tokenAddressCheck'>
}

export interface RedeemTokenDependencies {
  store: KeyValueStore
  tokenKey: MacKey
  /** The site by its public key (the site cache: Siteverify makes no database round trip). */
  findSite(siteKey: string): Promise<RedeemingSite | undefined>
  /**
   * Since when the store remembers redemptions (epoch ms; the store's remembersSince). A token
   * that carries no data epoch and was issued before it may have been redeemed already, its marker
   * forgotten (the in-process store at a restart, a Redis that lost its data): it is refused.
   */
  remembersRedemptionsSince: () => number
  /** The store's data epoch as this instance knows it (its dataEpoch): a token of another is refused. */
  dataEpoch: () => number | undefined
  /**
   * Whether the store the SDK's requests need is down (a recent answer may be reused): then a
   * page's form may have come without a token because the service refused the visitor's
   * challenge with 503, not because of a bot, and a call without a response says so.
   */
  isStorageDown: () => Promise<boolean>
  /** The claim a token earned at this address would carry (addressClaimOf), undefined for text that is no address. */
  claimAddress: (ip: string) => string | undefined
}

/** How far instances' clocks may differ without a token redeeming twice (DESIGN section 6). */
export const CLOCK_SKEW_MARGIN_MS = 60_000

/**
 * Whether the store may have forgotten the token's redemption (its single-use marker), so that it
 * must be refused: the token was issued under another data epoch than the store's now (a Redis
 * that lost its data since, the in-process store of an earlier process), or the store's is not
 * known yet. A token that carries no epoch (issued before tokens carried it, or while its instance
 * had not read it) is judged by its issue time: before remembersSince, which after a loss lies the
 * clock-skew margin ahead, it is refused.
 */
export function mayHaveForgottenRedemption(claims: TokenClaims, remembersSince: number, dataEpoch: number | undefined): boolean {
  return claims.dataEpoch === null ? claims.issuedAt < remembersSince : claims.dataEpoch !== dataEpoch
}

/**
 * Whether a token that passed its MAC is past its lifetime at `now`, the store's clock, which
 * tokens are stamped by. A token stamped more than the clock-skew margin ahead of that clock was
 * stamped by a clock running ahead (an instance of a release that stamped tokens by its own clock):
 * it counts as expired too, else it would stay valid for longer than its lifetime.
 */
export function isPastLifetime(reading: { outcome: 'valid' | 'expired'; claims: TokenClaims }, now: number): boolean {
  return reading.outcome === 'expired' || reading.claims.issuedAt > now + CLOCK_SKEW_MARGIN_MS
}

/**
 * How long a token's single-use marker lives, from `now` (the store's clock): until the token
 * expires by that clock, which every instance judges it by, and a margin more, for an error in an
 * instance's reading of that clock and for an instance of an earlier release, which judges by its
 * own. No instance takes the token for valid once its marker is gone.
 */
export function markerTimeToLiveMs(expiresAt: number, now: number): number {
  return expiresAt - now + CLOCK_SKEW_MARGIN_MS
}

/** The single-use marker of a token, keyed by its challenge (one token per challenge). */
export function redemptionKey(challengeId: string): string {
  return `redeemed:${challengeId}`
}

/**
 * Siteverify (DESIGN section 6), in the order of its checks:
 * 1. secret and response present (a missing response adds internal-error while the store is
 *    down); the placeholder reCAPTCHA v3's execute gives a visitor turned away
 *    (sdk/src/compat/blocked-response.ts) is invalid-input-response for every secret, the test
 *    secrets' included; a test secret answers at once (with the page's facts of a token it can read);
 * 2. the token's MAC (invalid-input-response);
 * 3. the secret belongs to the token's site (invalid-input-secret; so a token of site A presented
 *    with site B's secret fails as invalid-input-secret: the secret is not the token's); the
 *    secret key a rotation replaced counts until its grace period ends;
 * 4. sitekey, when sent, names the token's site (invalid-input-response);
 * 5. the token's lifetime, by the store's clock (timeout-or-duplicate; so is a token stamped more
 *    than the clock-skew margin ahead of it), unless the call carries the idempotency key of
 *    the redemption that came before the expiry: it gets that answer again; and a token the store
 *    may have forgotten the redemption of (mayHaveForgottenRedemption: issued under an earlier
 *    life of its data, the in-process store's before a restart, a Redis's before it lost it) is refused;
 * 6. for a site that refuses tokens of other addresses (settings.tokenAddressCheck refuse), a
 *    remoteip of the token's family outside the address group that earned it
 *    (invalid-input-response; counted as remoteip-mismatch);
 * 7. single use across instances: an atomic set-if-absent of the redemption marker, which lives
 *    a minute longer than the token. The loser of a race, or any later call, gets
 *    timeout-or-duplicate, unless it carries the idempotency key of the first call, which then
 *    gets the first answer again.
 * A wrong secret does not consume the token: only someone holding the right secret can spend it,
 * nor does a remoteip the site refuses it for (the form's true sender may still come with it).
 * A success says whether remoteip is where the token was earned (remoteipMatch), for a site that checks.
 *
 * `now` is the store's clock (KeyValueStore.now), by which tokens are stamped and markers live.
 */
export async function redeemToken(dependencies: RedeemTokenDependencies, request: SiteverifyRequest, now: number): Promise<SiteverifyAnswer> {
  return (await redeemTokenOfSite(dependencies, request, now)).answer
}

/** A redemption's answer, and the site whose Siteverify counts it adds to (src/plugins/siteverify-counts.ts). */
export interface Redemption {
  answer: SiteverifyAnswer
  /**
   * The token's site, when the call is its backend's: it sent the site's secret (the token
   * redeemed, spent or expired, or another site key named), or a secret a rotation replaced (a
   * backend not yet updated). Not for a made-up or damaged token, a test secret, any other wrong
   * secret (anyone holding a token could send junk secrets in a loop, and nothing spends the
   * token), nor a retry with the idempotency key (its first call counted).
   */
  countedFor: string | undefined
  /**
   * Why a failure failed, finer than its error code (timeout-or-duplicate is either; invalid-input-response
   * is a damaged token or another site key named): for answers in other vendors' words (reCAPTCHA
   * Enterprise's invalidReason, hCaptcha's codes). Undefined for a success and for test secrets.
   */
  reason?: FailureReason
}

export type FailureReason = 'missing' | 'malformed' | 'site-mismatch' | 'expired' | 'duplicate' | 'address-mismatch'

/** redeemToken, saying whose Siteverify counts the call adds to. */
export async function redeemTokenOfSite(dependencies: RedeemTokenDependencies, request: SiteverifyRequest, now: number): Promise<Redemption> {
  const secret = request.secret ?? ''
  const response = request.response ?? ''
  const missing = [
    ...(secret === '' ? (['missing-input-secret'] as const) : []),
    ...(response === '' ? (['missing-input-response'] as const) : []),
  ]
  // A backend that fails open (sdk/README.md) tells a visitor the service could not verify from a
  // request that skipped verification by internal-error: the page's SDK got 503 for as long.
  if (missing.length === 1 && response === '' && (await dependencies.isStorageDown())) {
    return { answer: answerFailure('missing-input-response', 'internal-error'), countedFor: undefined, reason: 'missing' }
  }
  if (missing.length > 0) return { answer: answerFailure(...missing), countedFor: undefined, reason: 'missing' }
  // No token, and no site to count it for: a blocked visitor's form, posted as under reCAPTCHA v3.
  if (isBlockedResponse(response)) return { answer: answerFailure('invalid-input-response'), countedFor: undefined, reason: 'malformed' }
  const reading = readToken(dependencies.tokenKey, response, now)
  const testAnswer = answerTestSecret(secret, reading, now)
  if (testAnswer !== undefined) return uncounted(testAnswer)

  if (reading.outcome === 'invalid') return { answer: answerFailure('invalid-input-response'), countedFor: undefined, reason: 'malformed' }
  const site = await dependencies.findSite(reading.claims.siteKey)
  // The id check matters only if a site key were ever given to another site.
  if (site?.id !== reading.claims.siteId) return { answer: answerFailure('invalid-input-response'), countedFor: undefined, reason: 'malformed' }
  if (!acceptsSecretKey(site, secret, now)) {
    return { answer: answerFailure('invalid-input-secret'), countedFor: isReplacedSecretKey(site, secret) ? site.id : undefined }
  }
  if (request.sitekey !== undefined && request.sitekey !== '' && request.sitekey !== site.siteKey) {
    return { answer: answerFailure('invalid-input-response'), countedFor: site.id, reason: 'site-mismatch' }
  }
  if (mayHaveForgottenRedemption(reading.claims, dependencies.remembersRedemptionsSince(), dependencies.dataEpoch())) return { answer: answerFailure('timeout-or-duplicate'), countedFor: site.id, reason: 'duplicate' }
  // The marker holds only the idempotency key of the first redemption (or nothing): the answer is
  // a function of the token's claims, so a retry with that key gets it again by recomputing it.
  const idempotencyKey = request.idempotency_key ?? ''
  const key = redemptionKey(reading.claims.challengeId)
  const remoteipMatch = addressMatchOf(dependencies, reading.claims.address, request.remoteip)
  // A retry of a redemption gets its answer again even once the token has expired since.
  if (isPastLifetime(reading, now)) {
    return (await isRetryOfFirst(dependencies.store, key, idempotencyKey))
      ? uncounted(answerSuccess(reading.claims, remoteipMatch))
      : { answer: answerFailure('timeout-or-duplicate'), countedFor: site.id, reason: 'expired' }
  }
  if (refusesAddress(site.settings.tokenAddressCheck, remoteipMatch)) {
    return { answer: answerFailure('invalid-input-response'), countedFor: site.id, reason: 'address-mismatch' }
  }

  const isFirst = await dependencies.store.setIfAbsent(key, `k:${idempotencyKey}`, markerTimeToLiveMs(reading.expiresAt, now))
  if (isFirst) return { answer: answerSuccess(reading.claims, remoteipMatch), countedFor: site.id }
  return (await isRetryOfFirst(dependencies.store, key, idempotencyKey))
    ? uncounted(answerSuccess(reading.claims, remoteipMatch))
    : { answer: answerFailure('timeout-or-duplicate'), countedFor: site.id, reason: 'duplicate' }
}

/** matchesAddressClaim of the token's claim and the remoteip sent, tagging remoteip only when the token has a claim to compare. */
function addressMatchOf(dependencies: RedeemTokenDependencies, claim: string | null, remoteip: string | undefined): boolean | null {
  if (claim === null || remoteip === undefined || remoteip === '') return null
  return matchesAddressClaim(claim, dependencies.claimAddress(remoteip))
}

function uncounted(answer: SiteverifyAnswer): Redemption {
  return { answer, countedFor: undefined }
}

/** Whether the token's marker holds this idempotency key, that of the redemption that set it. */
async function isRetryOfFirst(store: KeyValueStore, key: string, idempotencyKey: string): Promise<boolean> {
  return idempotencyKey !== '' && (await store.get(key)) === `k:${idempotencyKey}`
}

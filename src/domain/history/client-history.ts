import type { KeyValueStore } from '../../storage/ports.js'
import { sumExtraDifficulty } from '../risk/adaptive-difficulty.js'
import type { AnomalyLabel } from '../risk/anomalies.js'
import { previousWindowShare } from '../sliding-window.js'
import { countOf } from '../stored-count.js'

/**
 * Recent history of a client, kept in the key-value store so that every instance sees it:
 * - request rate: challenges per client per site, in one-minute fixed windows;
 * - recent blocks: blocked verifications per client per site in fifteen-minute windows, read as
 *   the current window and the one before, so that every block counts for 15 to 30 minutes and
 *   two blocks a few seconds apart are counted together whenever they happen;
 * - pending step-ups (see domain/risk/step-up.ts), kept beside them;
 * - fingerprint spread: distinct clients per fingerprint per site over an hour, counted with one
 *   marker key per (fingerprint, client) pair and a counter, which the store's countDistinct
 *   moves in one atomic step: a set with expiry. A client seen with a fingerprint over the
 *   limit (fingerprintClientLimitFor the site's traffic) is marked for the window, so that its
 *   next challenges are harder too.
 * It is safe on Redis Cluster: a client's keys share the hash tag {site:client} (clientKey), so a
 * challenge request counts itself and reads the rest in one command, and a verification reads its
 * client's state in one; a fingerprint's marker and counter share the fingerprint's hash tag.
 *
 * `client` is an opaque key of the client's address (a keyed tag of the IPv4 address or of the
 * IPv6 /64, see addressGroupOf): addresses are never stored in clear.
 *
 * Windows are cut by the store's clock (`store.now()`, Redis's as this instance knows it), as the
 * rate limits' are: instances whose clocks disagree count a client in the same windows.
 */
export interface HistoryPolicy {
  rateWindowMs: number
  /** Challenges per window above which high_request_rate holds. */
  rateLimit: number
  /** Challenges per window above which very_high_request_rate holds too (their weights add up). */
  veryHighRateLimit: number
  blockWindowMs: number
  /** Blocks within the window from which recent_blocks holds. */
  blockLimit: number
  fingerprintWindowMs: number
  /** Distinct clients per fingerprint from which fingerprint_many_ips holds, on a quiet site. */
  fingerprintClientLimit: number
  /**
   * On a busy site, the limit is this share of the site's scored verifications in the last hour
   * when that is higher (fingerprintClientLimitFor): identical devices share a fingerprint, and
   * the more people a site sees, the more of them come with the same popular phone.
   */
  fingerprintTrafficShare: number
}

/**
 * People reload, open tabs and go through step-ups, but rarely ask for thirty challenges a
 * minute on one site. Whole offices share one address (NAT), so the rate alone only adds a
 * little to the score; its main effect is difficulty. Twice that, one a second for a minute, is
 * an address minting tokens, which a challenge stops: the second label brings the score to the
 * default challenge threshold. (Labels, not a weight computed from the count: a score is
 * recomputed from the labels the log keeps.) A fingerprint is shared by identical
 * devices (one phone model, one OS version, screen, time zone and language), so spread needs
 * many distinct addresses: 20, or on a busy site 5% of its traffic (the most common such device
 * of a site's visitors is rarely more than a few per cent of them; one fingerprint replayed by a
 * bot is most of what that bot sends).
 */
export const defaultHistoryPolicy: HistoryPolicy = {
  rateWindowMs: 60_000,
  rateLimit: 30,
  veryHighRateLimit: 60,
  blockWindowMs: 15 * 60_000,
  blockLimit: 2,
  fingerprintWindowMs: 60 * 60_000,
  fingerprintClientLimit: 20,
  fingerprintTrafficShare: 0.05,
}

const HOUR_MS = 3_600_000

/**
 * A site's scored verifications in the hour before `now`, from its counts of the current UTC hour
 * and of the one before: the current one, and the part of the previous one that hour still
 * covers (as if it had been spread evenly over its hour).
 */
export function lastHourOf(counts: { current: number; previous: number }, now: number): number {
  return counts.current + Math.round(counts.previous * previousWindowShare(now, HOUR_MS))
}

/** Distinct clients from which a fingerprint is one too many on a site with this traffic (scored verifications in the last hour). */
export function fingerprintClientLimitFor(lastHourVerifications: number, policy: HistoryPolicy = defaultHistoryPolicy): number {
  return Math.max(policy.fingerprintClientLimit, Math.ceil(lastHourVerifications * policy.fingerprintTrafficShare))
}

export interface HistoryAssessment {
  anomalies: AnomalyLabel[]
  /** Bits to add to the next challenge for these labels (see sumExtraDifficulty). */
  extraDifficulty: number
}

export interface ChallengeRequestAssessment extends HistoryAssessment {
  /** Step-ups the client has been asked for on this site and not yet resolved. */
  stepUps: number
  /** The pending step-up round's id ('' with none): a challenge issued in it carries it. */
  stepUpRound: string
}

/** A client's pending step-ups as stored: `count.round`, the round a random id of its own. */
export interface PendingStepUps {
  count: number
  round: string
}

export function encodePendingStepUps(pending: PendingStepUps): string {
  return `${pending.count}.${pending.round}`
}

/** Whether `text` is the form of a step-up round's id (as the pending state and challenge records hold it). */
export function isStepUpRound(text: string | undefined): text is string {
  return text !== undefined && /^[a-z0-9]{1,16}$/.test(text)
}

/** The stored state, or no step-up pending (count 0, round '') for anything else. */
export function decodePendingStepUps(stored: string | null | undefined): PendingStepUps {
  const [count, round, ...rest] = (stored ?? '').split('.')
  const value = countOf(count)
  return value > 0 && rest.length === 0 && isStepUpRound(round) ? { count: value, round } : { count: 0, round: '' }
}

export interface ClientRef {
  siteId: string
  client: string
  /**
   * The browser on that address whose step-ups are meant (browserTagOf its User-Agent): people
   * behind one address each go through their own. The rest of the history is the address's.
   */
  browser?: string
}

/** A key of one client's state on one site; all of them share the hash tag {site:client}. */
export function clientKey(ref: ClientRef, part: string): string {
  return `history:{${ref.siteId}:${ref.client}}:${part}`
}

export const STEP_UPS_KEY_PART = 'stepups'

/** The key of a client's pending step-ups: per address and, when known, browser. */
export function stepUpsKey(ref: ClientRef): string {
  return clientKey(ref, ref.browser === undefined ? STEP_UPS_KEY_PART : `${STEP_UPS_KEY_PART}:${ref.browser}`)
}

const rateKey = (ref: ClientRef, windowIndex: number) => clientKey(ref, `rate:${windowIndex}`)
const blocksKey = (ref: ClientRef, windowIndex: number) => clientKey(ref, `blocks:${windowIndex}`)
const spreadKey = (ref: ClientRef) => clientKey(ref, 'spread')

/** The keys of the current block window and the one before. */
function recentBlocksKeys(ref: ClientRef, now: number, policy: HistoryPolicy): [string, string] {
  const windowIndex = Math.floor(now / policy.blockWindowMs)
  return [blocksKey(ref, windowIndex), blocksKey(ref, windowIndex - 1)]
}

const fingerprintMarkerKey = (siteId: string, fingerprint: string, client: string) => `history:{${siteId}:fp:${fingerprint}}:client:${client}`
const fingerprintCountKey = (siteId: string, fingerprint: string) => `history:{${siteId}:fp:${fingerprint}}:clients`

/** The labels of a client's challenges in the current window: high_request_rate, and above the second limit very_high_request_rate too. */
function rateAnomaliesOf(requests: number, policy: HistoryPolicy): AnomalyLabel[] {
  if (requests > policy.veryHighRateLimit) return ['high_request_rate', 'very_high_request_rate']
  return requests > policy.rateLimit ? ['high_request_rate'] : []
}

function assessmentOf(anomalies: AnomalyLabel[]): HistoryAssessment {
  return { anomalies, extraDifficulty: sumExtraDifficulty(anomalies) }
}

/**
 * At a challenge request: counts it, and judges the client by its rate and its recent blocks; it
 * also reads the client's pending step-ups, in the same atomic step. The answer sets the
 * difficulty of the challenge being issued.
 */
export async function recordChallengeRequest(
  store: KeyValueStore,
  ref: ClientRef,
  now: number = store.now(),
  policy: HistoryPolicy = defaultHistoryPolicy,
): Promise<ChallengeRequestAssessment> {
  const windowIndex = Math.floor(now / policy.rateWindowMs)
  const { count: requests, values } = await store.incrementAndRead(rateKey(ref, windowIndex), policy.rateWindowMs * 2, [
    ...recentBlocksKeys(ref, now, policy),
    spreadKey(ref),
    stepUpsKey(ref),
  ])
  const [blocks, earlierBlocks, spread, stepUps] = values
  const anomalies: AnomalyLabel[] = []
  anomalies.push(...rateAnomaliesOf(requests, policy))
  if (countOf(blocks) + countOf(earlierBlocks) >= policy.blockLimit) anomalies.push('recent_blocks')
  if (spread !== null && spread !== undefined) anomalies.push('fingerprint_many_ips')
  const pending = decodePendingStepUps(stepUps)
  return { anomalies, extraDifficulty: sumExtraDifficulty(anomalies), stepUps: pending.count, stepUpRound: pending.round }
}

export interface VerificationHistoryInput extends ClientRef {
  /** A stable digest of the device fingerprint (see fingerprintDigest), or undefined without one. */
  fingerprint: string | undefined
  /**
   * The site's scored verifications in the last hour, asked only when the fingerprint's spread
   * reaches the policy's fixed limit (rarely); without it the fixed limit holds.
   */
  siteTraffic?: () => Promise<number>
}

/**
 * At a verification: records that this fingerprint was seen from this client, and judges the
 * client by its current rate, its recent blocks and the spread of its fingerprint. Reading the
 * rate does not count the verification itself (the challenge it answers was counted).
 */
export async function recordAndAssessHistory(
  store: KeyValueStore,
  input: VerificationHistoryInput,
  now: number = store.now(),
  policy: HistoryPolicy = defaultHistoryPolicy,
): Promise<HistoryAssessment> {
  const windowIndex = Math.floor(now / policy.rateWindowMs)
  const [[requests, blocks, earlierBlocks], spread] = await Promise.all([
    store.getMany([rateKey(input, windowIndex), ...recentBlocksKeys(input, now, policy)]),
    input.fingerprint === undefined ? Promise.resolve(0) : recordFingerprint(store, input, input.fingerprint, policy),
  ])
  const anomalies: AnomalyLabel[] = []
  anomalies.push(...rateAnomaliesOf(countOf(requests), policy))
  if (countOf(blocks) + countOf(earlierBlocks) >= policy.blockLimit) anomalies.push('recent_blocks')
  if (spread >= policy.fingerprintClientLimit && (input.siteTraffic === undefined || spread >= fingerprintClientLimitFor(await input.siteTraffic(), policy))) {
    anomalies.push('fingerprint_many_ips')
    // The client's next challenges are raised for it too (recordChallengeRequest reads this).
    await store.set(spreadKey(input), '1', policy.fingerprintWindowMs)
  }
  return assessmentOf(anomalies)
}

/** Returns how many distinct clients this fingerprint has been seen from in its window. */
function recordFingerprint(store: KeyValueStore, ref: ClientRef, fingerprint: string, policy: HistoryPolicy): Promise<number> {
  return store.countDistinct(fingerprintMarkerKey(ref.siteId, fingerprint, ref.client), fingerprintCountKey(ref.siteId, fingerprint), policy.fingerprintWindowMs)
}

/** After the verdict: a block counts against the client in its block window and the next. */
export async function recordOutcome(
  store: KeyValueStore,
  ref: ClientRef,
  action: 'allow' | 'challenge' | 'block',
  policy: HistoryPolicy = defaultHistoryPolicy,
  now: number = store.now(),
): Promise<void> {
  if (action === 'block') await store.increment(blocksKey(ref, Math.floor(now / policy.blockWindowMs)), policy.blockWindowMs * 2)
}

/**
 * How old a labeled verification may be for a fraudulent label to count against its client: as
 * long as a block of the verification's own time would still count (its block window and the
 * next, 30 minutes with the default policy). An address changes hands (a DHCP lease, a mobile
 * carrier's pool, a shared office): the label of a row older than that would punish whoever holds
 * the address now, not the fraudster.
 */
export const fraudulentLabelMaxAgeMs = (policy: HistoryPolicy = defaultHistoryPolicy): number => policy.blockWindowMs * 2

/**
 * A verification its site's backend or operator labeled fraudulent: it counts against its client
 * as blocks do, in the block window of the label's time and the next, and as many as it takes
 * for recent_blocks to hold (the policy's blockLimit): a confirmed fraud is stronger evidence than
 * one block, so the client's next challenge is harder at once. Only a recent verification's label
 * counts (fraudulentLabelMaxAgeMs); an older one is left out, and false is answered. A legitimate
 * label lowers nothing: history only ever adds to a client's difficulty.
 */
export async function recordFraudulentLabel(
  store: KeyValueStore,
  labeled: ClientRef & { verifiedAt: Date },
  policy: HistoryPolicy = defaultHistoryPolicy,
  now: number = store.now(),
): Promise<boolean> {
  if (now - labeled.verifiedAt.getTime() >= fraudulentLabelMaxAgeMs(policy)) return false
  await store.increment(blocksKey(labeled, Math.floor(now / policy.blockWindowMs)), policy.blockWindowMs * 2, policy.blockLimit)
  return true
}

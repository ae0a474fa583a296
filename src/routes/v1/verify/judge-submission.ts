import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ChallengeRecord } from '../../../domain/challenge/challenge-record.js'
import { MAX_DIFFICULTY } from '../../../domain/challenge/choose-difficulty.js'
import { redeemChallenge } from '../../../domain/challenge/redeem-challenge.js'
import { isNonceText } from '../../../domain/proof-of-work/nonce.js'
import type { NetworkProfile } from '../../../domain/network/network-profile.js'
import type { AnomalyLabel } from '../../../domain/risk/anomalies.js'
import { decideAction } from '../../../domain/risk/decide-action.js'
import type { Signals } from '../../../domain/risk/scoring-input.js'
import { scoreOf, scoreVerification } from '../../../domain/risk/score-verification.js'
import { advanceStepUps, claimStepUps } from '../../../domain/risk/step-up.js'
import { recordOutcome } from '../../../domain/history/client-history.js'
import { fingerprintDigest } from '../../../domain/history/client-keys.js'
import { findBlocklistLabels, hasBlocklist } from '../../../domain/sites/blocklist.js'
import type { ListDecision } from '../../../domain/sites/list-decision.js'
import { testOutcomeOf, type TestSiteOutcome } from '../../../domain/sites/test-site-keys.js'
import { addressClaimOf } from '../../../domain/token/address-binding.js'
import { ephemeralIdOf } from '../../../domain/token/ephemeral-id.js'
import { issueToken, TOKEN_LIFETIME_MS } from '../../../domain/token/token.js'
import { ApiError, invalidRequest } from '../../../errors.js'
import type { VerificationBlockedEvent } from '../../../plugins/events.js'
import type { PublicCaller } from '../../../plugins/public-gate.js'
import { assessClient, clientFactsOf, historyRefOf } from '../client-risk.js'
import { noteFacts } from './rejection-log.js'
import type { VerificationResultBody } from './schemas.js'

export interface SubmissionBody {
  challengeId: string
  nonce: string
  solveTimeMs: number
  fingerprint: object
  behaviorData: object
  pageAction?: string
  cData?: string
}

/**
 * A submission from redemption to verdict: consume the challenge and check the proof of work,
 * score, decide, move step-up state on, issue a token for allow, then log, count and announce.
 * Refusals are thrown as ApiError; the route's onError hook logs and counts them.
 */
export async function judgeSubmission(
  app: FastifyInstance,
  request: FastifyRequest,
  caller: PublicCaller,
  body: SubmissionBody,
): Promise<VerificationResultBody> {
  const challengeId = body.challengeId.toLowerCase()
  noteFacts(request, { challengeId, solveTimeMs: body.solveTimeMs })
  // The schema bounds the nonce's digits; its value must also stay below 2^53.
  if (!isNonceText(body.nonce)) {
    throw invalidRequest([{ field: 'nonce', message: 'must be below 2^53' }])
  }

  const now = Date.now()
  const challengeKey = app.keyRing.macKeyFor('challenge')
  const redemption = await redeemChallenge(app.keyValue, challengeKey, { challengeId, nonce: body.nonce, siteId: caller.site.id, now })
  if (redemption.outcome === 'rejected') {
    if (redemption.record !== undefined) noteFacts(request, { difficulty: redemption.record.difficulty, stepUps: redemption.record.stepUps })
    throw new ApiError(redemption.code)
  }
  const { record, elapsedMs } = redemption
  const testOutcome = testOutcomeOf(caller.site.id)
  if (testOutcome !== undefined) return judgeForTestSiteKey(app, caller, body, challengeId, testOutcome)
  const fingerprint = body.fingerprint as Signals
  const deviceDigest = fingerprintDigest(fingerprint)
  const device = deviceOf(app, caller, deviceDigest, now)
  if (caller.isAllowedAddress) {
    return judgeForAllowedAddress(app, request, caller, body, { challengeId, now, difficulty: record.difficulty, stepUps: record.stepUps, device, decidedBy: 'allowlist' })
  }
  // The site's blocklist comes after the allowlist, which wins, and after the proof of work, so
  // that a bad solution is refused as anywhere else. A site without one pays one length check; a
  // site with one looks the profile up here, once, for the check and for the judging below.
  let profile: NetworkProfile | undefined
  if (hasBlocklist(caller.site.settings)) {
    profile = await app.network.profile(caller.clientIp)
    const labels = findBlocklistLabels(caller.site.settings, caller.clientIp, profile.countryCode)
    if (labels.length > 0) {
      const judged = { challengeId, now, difficulty: record.difficulty, stepUps: record.stepUps, device, record, decidedBy: 'blocklist' as const }
      return judgeForBlocklisted(app, request, caller, body, judged, { labels, countryCode: profile.countryCode })
    }
  }

  const { clientTag } = caller
  const [client, stepUps] = await Promise.all([
    assessClient(app, request, caller, deviceDigest, profile),
    claimStepUps(app.keyValue, historyRefOf(request, caller), record),
  ])
  const { network, history, transport } = clientFactsOf(request, client)
  const { riskScore, anomalies } = scoreVerification({
    submission: { solveTimeMs: body.solveTimeMs, fingerprint, behaviorData: body.behaviorData as Signals },
    request: { headers: request.headers, hasOrigin: caller.origin.hostname !== null, ...transport },
    proofOfWork: {
      difficulty: record.difficulty,
      observedSolveMs: elapsedMs,
      isSameClient: clientTag === record.clientTag,
      nonce: body.nonce,
    },
    network,
    history,
    stepUps,
    stepUpCreditBelow: caller.site.settings.blockThreshold,
  })
  // Thresholds and the step-up limit are the site's own settings. A challenge at the ceiling
  // cannot be followed by a harder one, so it ends the sequence as the last step-up would.
  const action = decideAction(riskScore, caller.site.settings, stepUps, record.difficulty < MAX_DIFFICULTY)
  await Promise.all([
    advanceStepUps(app.keyValue, client.historyRef, action, stepUps),
    recordOutcome(app.keyValue, client.historyRef, action),
  ])

  const { countryCode } = client.profile
  const result = answerVerdict(app, caller, body, challengeId, { action, riskScore, anomalies, countryCode }, device)

  logVerdict(app, request, caller, body, { challengeId, now, difficulty: record.difficulty, stepUps, device }, { action, riskScore, anomalies, countryCode })
  if (action === 'block') {
    announceBlock(app, {
      siteId: caller.site.id,
      site: caller.site,
      timestamp: new Date(now),
      riskScore,
      anomalies: [...anomalies],
      countryCode,
      verificationId: request.id,
      device,
      hostname: caller.origin.hostname,
      pageAction: body.pageAction ?? null,
    })
  }
  return result
}

interface Verdict {
  action: VerificationResultBody['action']
  riskScore: number
  anomalies: string[]
  countryCode: string
}

/** The device's ephemeral id on the site (ephemeralIdOf), when the submission described a device. */
function deviceOf(app: FastifyInstance, caller: PublicCaller, deviceDigest: string | undefined, now: number): string | null {
  return deviceDigest === undefined ? null : ephemeralIdOf(app.keyRing.macKeyFor('ephemeral-id'), caller.site.id, deviceDigest, now)
}

/**
 * The answer to a verdict: for allow, with the token that carries it to Siteverify, and with the
 * device's ephemeral id (unless EPHEMERAL_IDS turned them off in tokens).
 */
function answerVerdict(
  app: FastifyInstance,
  caller: PublicCaller,
  body: SubmissionBody,
  challengeId: string,
  verdict: Verdict,
  device: string | null,
): VerificationResultBody {
  const { action, riskScore } = verdict
  if (action !== 'allow') return { success: false, riskScore, action }
  // Stamped by the store's clock, which Siteverify judges the token and sizes its single-use
  // marker by at whichever instance redeems it: stamped by this instance's own clock, a token from
  // an instance running ahead outlived its marker (it redeemed twice) and one from an instance
  // running behind was expired on arrival. The store's clock is a sum in memory, not a round trip.
  const issuedAt = app.keyValue.now()
  const token = issueToken(app.keyRing.macKeyFor('token'), {
    siteId: caller.site.id,
    siteKey: caller.site.siteKey,
    challengeId,
    ...verdict,
    hostname: caller.origin.hostname,
    issuedAt,
    // Read from the store's memory, not from Redis: the epoch is read in the background (every second).
    // EPHEMERAL_IDS=false asks for the earliest format, which every earlier release reads: no epoch.
    dataEpoch: app.config.ephemeralIds ? (app.keyValue.dataEpoch() ?? null) : null,
    pageAction: body.pageAction ?? null,
    cData: body.cData ?? null,
    ephemeralId: app.config.ephemeralIds ? device : null,
    // Only for a site that checks its tokens' addresses, and never in the earliest format: a
    // token of any other site is as long as before, and read by every earlier release.
    address: app.config.ephemeralIds && caller.site.settings.tokenAddressCheck !== 'off' ? (addressClaimOf(caller.clientIp, () => caller.groupTag) ?? null) : null,
  })
  return { success: true, riskScore, action, token, expiresAt: new Date(issuedAt + TOKEN_LIFETIME_MS).toISOString() }
}

/** What a verdict is logged with besides the verdict itself. */
interface Judged {
  challengeId: string
  now: number
  difficulty: number
  stepUps: number
  /** The device's ephemeral id on the site, when the submission described one. */
  device: string | null
  /** The site's list that decided the verdict, when one did (the risk model did otherwise). */
  decidedBy?: ListDecision
}

/** The verdict's row in the verification log, and its count. */
function logVerdict(app: FastifyInstance, request: FastifyRequest, caller: PublicCaller, body: SubmissionBody, judged: Judged, verdict: Verdict): void {
  app.verificationLog.record({
    id: request.id,
    siteId: caller.site.id,
    challengeId: judged.challengeId,
    createdAt: new Date(judged.now),
    action: verdict.action,
    errorCode: null,
    riskScore: verdict.riskScore,
    anomalies: verdict.anomalies,
    countryCode: verdict.countryCode,
    clientIp: caller.clientIp,
    hostname: caller.origin.hostname,
    pageAction: body.pageAction ?? null,
    userAgent: request.headers['user-agent'] ?? null,
    difficulty: judged.difficulty,
    solveTimeMs: body.solveTimeMs,
    stepUps: judged.stepUps,
    device: judged.device,
    decidedBy: judged.decidedBy ?? null,
  })
  noteFacts(request, { logged: true })
  app.counters.increment('verifications', { action: verdict.action })
}

/**
 * A submission from an address on the site's allowlist, once its proof of work checked out:
 * allowed at score 0 without being judged (no signals, history or step-up), logged and counted
 * as any allow is; its token names the device as any other's does.
 */
async function judgeForAllowedAddress(
  app: FastifyInstance,
  request: FastifyRequest,
  caller: PublicCaller,
  body: SubmissionBody,
  judged: Judged & { decidedBy: 'allowlist' },
): Promise<VerificationResultBody> {
  const { countryCode } = await app.network.profile(caller.clientIp)
  const verdict: Verdict = { action: 'allow', riskScore: 0, anomalies: [], countryCode }
  const result = answerVerdict(app, caller, body, judged.challengeId, verdict, judged.device)
  logVerdict(app, request, caller, body, judged, verdict)
  return result
}

/**
 * A submission from an address or a country on the site's blocklist, once its proof of work
 * checked out: blocked at score 100 with the blocklist's labels, without being scored otherwise
 * (no signals, no history labels, no step-up credit), and then kept in the client's history,
 * logged, counted and announced as any block is. The history is what makes the client's next
 * challenges harder (recent_blocks), so that a bot in a blocked range does not loop at the base
 * difficulty; the block also ends a pending step-up sequence, as any block does.
 */
async function judgeForBlocklisted(
  app: FastifyInstance,
  request: FastifyRequest,
  caller: PublicCaller,
  body: SubmissionBody,
  judged: Judged & { record: Pick<ChallengeRecord, 'stepUps' | 'stepUpRound'>; decidedBy: 'blocklist' },
  blocklisted: { labels: AnomalyLabel[]; countryCode: string },
): Promise<VerificationResultBody> {
  const { labels, countryCode } = blocklisted
  const verdict: Verdict = { action: 'block', riskScore: scoreOf(labels, 0), anomalies: labels, countryCode }
  const historyRef = historyRefOf(request, caller)
  // As for a scored block: the round the challenge carried is taken (advanceStepUps leaves a
  // block's state alone), and the block counts in the client's block window.
  await Promise.all([claimStepUps(app.keyValue, historyRef, judged.record), recordOutcome(app.keyValue, historyRef, 'block')])
  const result = answerVerdict(app, caller, body, judged.challengeId, verdict, judged.device)
  logVerdict(app, request, caller, body, judged, verdict)
  announceBlock(app, {
    siteId: caller.site.id,
    site: caller.site,
    timestamp: new Date(judged.now),
    riskScore: verdict.riskScore,
    anomalies: [...labels],
    countryCode,
    verificationId: request.id,
    device: judged.device,
    hostname: caller.origin.hostname,
    pageAction: body.pageAction ?? null,
  })
  return result
}

/**
 * A test site key's submission, once its proof of work checked out: always the key's outcome, at
 * score 0 or 100, with no step-up, history, log row or webhook, counted as action "test"
 * (docs/core-flow.md, section 6).
 */
function judgeForTestSiteKey(
  app: FastifyInstance,
  caller: PublicCaller,
  body: SubmissionBody,
  challengeId: string,
  outcome: TestSiteOutcome,
): VerificationResultBody {
  // Counted apart, as Siteverify counts the test secrets: anyone may submit to these keys at one
  // bit of work, and that must not move the allow and block counts operators alert on.
  app.counters.increment('verifications', { action: 'test' })
  const verdict = { action: outcome, riskScore: outcome === 'allow' ? 0 : 100, anomalies: [], countryCode: 'XX' }
  // A test key's token names no device: its answers are fixed, for a backend's CI.
  return answerVerdict(app, caller, body, challengeId, verdict, null)
}

function announceBlock(app: FastifyInstance, event: VerificationBlockedEvent): void {
  try {
    app.events.emit('verification.blocked', event)
  } catch (error) {
    // Listeners must catch their own failures; one that does not must still not fail the answer.
    app.log.error({ err: error }, 'a verification.blocked listener threw')
  }
}

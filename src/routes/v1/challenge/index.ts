import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { chooseDifficulty } from '../../../domain/challenge/choose-difficulty.js'
import { draftChallenge, presentChallenge, storeChallenge, type ChallengeDraft } from '../../../domain/challenge/issue-challenge.js'
import { surgeBits } from '../../../domain/challenge/site-surge.js'
import { sumExtraDifficulty } from '../../../domain/risk/adaptive-difficulty.js'
import type { AnomalyLabel } from '../../../domain/risk/anomalies.js'
import type { SiteSettings } from '../../../domain/sites/site.js'
import { errorCodeOf } from '../../../plugins/error-handler.js'
import { callerOf, type PublicCaller } from '../../../plugins/public-gate.js'
import { networkLabelsFor, recordChallengeFor } from '../client-risk.js'
import { publicGateErrors, siteKeySecurity } from '../public-schemas.js'

const Challenge = Type.Object({
  challengeId: Type.String({ format: 'uuid' }),
  challenge: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'HMAC-SHA256 of the challenge, 64 lowercase hex characters' }),
  difficulty: Type.Integer({ description: 'Leading zero bits SHA-256(challenge + nonce) must have' }),
  mode: Type.Literal('invisible'),
  algorithm: Type.Literal('SHA-256'),
  expiresAt: Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' }),
})

/** The site's difficulty raised for pending step-ups, for the client's labels and for a surge of the site's traffic. */
function difficultyFor(settings: SiteSettings, stepUps: number, labels: readonly AnomalyLabel[], surge: number): number {
  return chooseDifficulty({ baseDifficulty: settings.difficulty, stepUps, extraBits: sumExtraDifficulty(labels) + surge })
}

/** An address on the site's allowlist: the base difficulty, uncounted and unjudged. */
async function issueAtBaseDifficulty(app: FastifyInstance, caller: PublicCaller, now: number): Promise<ChallengeDraft> {
  const { settings } = caller.site
  const issued = draftChallenge({
    siteId: caller.site.id,
    difficulty: settings.difficulty,
    lifetimeSeconds: settings.challengeLifetimeSeconds,
    stepUps: 0,
    clientTag: caller.clientTag,
    now,
  })
  await storeChallenge(app.keyValue, issued)
  return issued
}

/**
 * Any other client: the site's difficulty raised for its network, its history and pending
 * step-ups, and a surge of the site's traffic. Most clients have no step-up pending and a quiet
 * history, so the challenge is stored at the difficulty its network alone calls for, in the same
 * round trip as the step that counts the request and reads what could raise it; when it does, it
 * is stored again before anyone has seen it.
 */
async function issueJudged(app: FastifyInstance, request: FastifyRequest, caller: PublicCaller, now: number): Promise<ChallengeDraft> {
  const { site, clientTag } = caller
  const { settings } = site
  const networkLabels = await networkLabelsFor(app, caller)
  // The site's rate with this challenge in it; it is counted once it is issued (a request that
  // fails, in an outage say, is not a challenge anyone must pay for).
  const surgeThreshold = settings.surgeChallengesPerMinute
  const surge = surgeThreshold > 0 ? surgeBits(app.surge.rate(site.id) + 1, surgeThreshold) : 0
  const likely = draftChallenge({
    siteId: site.id,
    difficulty: difficultyFor(settings, 0, networkLabels, surge),
    lifetimeSeconds: settings.challengeLifetimeSeconds,
    stepUps: 0,
    clientTag,
    now,
  })
  const [history] = await Promise.all([recordChallengeFor(app, request, caller), storeChallenge(app.keyValue, likely)])
  const stepUps = Math.min(history.stepUps, settings.maxStepUps)
  const difficulty = difficultyFor(settings, stepUps, [...networkLabels, ...history.anomalies], surge)
  let issued = likely
  if (difficulty !== likely.record.difficulty || stepUps !== likely.record.stepUps) {
    const round = stepUps > 0 ? { stepUpRound: history.stepUpRound } : {}
    issued = { challengeId: likely.challengeId, record: { ...likely.record, difficulty, stepUps, ...round } }
    await storeChallenge(app.keyValue, issued)
  }
  if (surgeThreshold > 0) app.surge.count(site.id, surgeThreshold)
  if (surge > 0) app.counters.increment('challengesSurged', { bits: String(surge) })
  return issued
}

const challengeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const challengeKey = app.keyRing.macKeyFor('challenge')

  // The request has no body; whatever a client sends (an empty JSON body, say) is ignored, within
  // the body limit, instead of failing the request.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined))

  // Every refusal is counted, as verify's are (the request names no challenge to log).
  app.addHook('onError', async (_request, _reply, error) => {
    app.counters.increment('challengesRejected', { code: errorCodeOf(error) })
  })

  app.post(
    '/api/v1/challenge',
    {
      schema: {
        tags: ['public'],
        summary: 'Request a proof-of-work challenge',
        description:
          'Find a decimal nonce (no leading zeros, below 2^53) such that SHA-256(challenge + nonce) begins with `difficulty` zero bits, ' +
          "counted from the most significant bit of the digest's first byte (the digest, read as a big-endian number, is below 2^(256 - difficulty)), " +
          'then submit it to /api/v1/verify before `expiresAt`. The risk model expects the nonce layout of the SDK (16 digits, ^[1-8][0-9]{15}$; ' +
          'a solver counting from 0 is labelled foreign_solver: docs/core-flow.md, section 2). Any body is ignored (within 16 KiB), but a Content-Type ' +
          'that is not a media type (`text`, `;;;`) answers 415. Another method than POST answers 405 method_not_allowed (Allow: POST).',
        security: siteKeySecurity,
        response: { 200: Challenge, ...publicGateErrors },
        ignoresBody: true,
      },
    },
    async (request, reply) => {
      // The challenge is issued as of its request, not after the lookups below.
      const now = Date.now()
      const caller = callerOf(request)
      const issued = caller.isAllowedAddress ? await issueAtBaseDifficulty(app, caller, now) : await issueJudged(app, request, caller, now)
      app.counters.increment('challengesIssued', {})
      void reply.header('cache-control', 'no-store')
      return presentChallenge(challengeKey, issued)
    },
  )

  // CORS preflight; the public gate answers it before this handler could run.
  app.options('/api/v1/challenge', { schema: { hide: true } }, async (_request, reply) => reply.code(204).send())
}

export default challengeRoutes

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../../../errors.js'
import { errorCodeOf } from '../../../plugins/error-handler.js'
import { callerOf } from '../../../plugins/public-gate.js'
import { PublicErrorResponse, publicGateErrors, siteKeySecurity } from '../public-schemas.js'
import { judgeSubmission } from './judge-submission.js'
import { factsOf } from './rejection-log.js'
import { SolutionSubmission, VerificationResult } from './schemas.js'

const verifyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.decorateRequest('submissionFacts', null)

  // A body that is not JSON is a malformed body (DESIGN section 3: 400 validation_error), whatever
  // well-formed Content-Type it came with, or without one. A Content-Type that is not a media type
  // at all (`text`, `;;;`) is refused before any parser by Fastify: 415 unsupported_media_type.
  app.addContentTypeParser('*', (_request, _payload, done) => {
    done(new ApiError('validation_error', 'The body must be JSON, sent with Content-Type: application/json.'))
  })

  // Every refusal is counted, and logged when it names a site (rate-limited floods are not logged:
  // writing them would hand the flood to the database).
  app.addHook('onError', async (request, _reply, error) => {
    const code = errorCodeOf(error)
    app.counters.increment('verificationsRejected', { code })
    const caller = request.publicCaller
    if (caller === null || code === 'rate_limited') return
    const facts = factsOf(request)
    // An error after the verdict was logged (in sending the answer) is counted, not logged twice.
    if (facts.logged === true) return
    app.verificationLog.record({
      id: request.id,
      siteId: caller.site.id,
      challengeId: facts.challengeId ?? null,
      createdAt: new Date(),
      action: 'rejected',
      errorCode: code,
      riskScore: null,
      anomalies: [],
      countryCode: null,
      clientIp: caller.clientIp,
      hostname: caller.origin.hostname,
      pageAction: null,
      userAgent: request.headers['user-agent'] ?? null,
      difficulty: facts.difficulty ?? null,
      solveTimeMs: facts.solveTimeMs ?? null,
      stepUps: facts.stepUps ?? 0,
      device: null,
      decidedBy: null,
    })
  })

  app.post(
    '/api/v1/verify',
    {
      schema: {
        tags: ['public'],
        summary: 'Submit a solved challenge with browser signals',
        description:
          'Consumes the challenge (one submission per challenge) and answers a risk score and a recommended action; allow carries a token for Siteverify. ' +
          'Made for the browser SDK (sdk/README.md): the risk model scores the signals it collects and the layout of its nonces, so a client of your own that sends ' +
          'only the fields named here, or counts nonces from 0, scores higher: over HTTPS missing_fetch_metadata, incomplete_fingerprint and foreign_solver at least, ' +
          'and a native app or script that sends no browser signals at all is blocked (docs/core-flow.md, section 3, "Clients that are not browsers"; docs/risk.md lists what is scored). ' +
          'The answer carries the score and action only; the labels are in the site\'s log (GET /api/v1/sites/{id}/verifications). ' +
          'A request refused before the challenge is read (401, 403, 429, 413, 415, 400 validation_error) leaves the challenge usable. ' +
          'The body must be application/json (another well-formed type is 400 validation_error, one that is no media type 415). Another method than POST answers 405 method_not_allowed (Allow: POST).',
        security: siteKeySecurity,
        body: SolutionSubmission,
        response: { 200: VerificationResult, 400: PublicErrorResponse, 413: PublicErrorResponse, ...publicGateErrors },
        errorCodes: ['challenge_invalid', 'challenge_expired', 'solution_invalid'],
      },
    },
    async (request) => judgeSubmission(app, request, callerOf(request), request.body),
  )

  app.options('/api/v1/verify', { schema: { hide: true } }, async (_request, reply) => reply.code(204).send())
}

export default verifyRoutes

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  findLabelNoteProblem, findReasonProblem, isLabelReason, isVerificationId, isVerificationLabel, type NewVerificationLabel,
} from '../../../domain/feedback/verification-label.js'
import { acceptsSecretKey, siteOpenedBy } from '../../../domain/sites/site-keys.js'
import { readToken } from '../../../domain/token/token.js'
import type { Site } from '../../../domain/sites/site.js'
import { errorBody, type ErrorCode } from '../../../errors.js'
import { acceptFormFields } from '../../../http/form-fields.js'
import { createSiteRepository } from '../../../storage/sql/site-repository.js'
import { createVerificationLabelRepository, type LabelTargetName } from '../../../storage/sql/verification-label-repository.js'
import { followLabel } from '../verification-labels.js'
import { FeedbackAccepted, FeedbackBody, FeedbackRefused, type FeedbackErrorCode } from './feedback-schemas.js'
import { fieldsOf } from './index.js'

export const FEEDBACK_PATH = '/api/v1/siteverify/feedback'

/** A refusal: its HTTP status, its Siteverify-style codes, and (when the code's own is too vague) the error's message. */
class FeedbackRefusal {
  constructor(
    readonly status: 400 | 401 | 404,
    readonly codes: FeedbackErrorCode[],
    readonly message?: string,
  ) {}
}

const refuse = (status: 400 | 401 | 404, ...codes: FeedbackErrorCode[]) => new FeedbackRefusal(status, codes)

const invalidVerificationId = () =>
  new FeedbackRefusal(400, ['invalid-input-verification-id'], "verification_id is not a verification's id (a UUID, as Siteverify's metadata.verification_id).")

const apiCodes = { 400: 'validation_error', 401: 'unauthorized', 404: 'not_found', 413: 'payload_too_large', 415: 'unsupported_media_type' } as const

/** The body of a refusal, in both dialects (FeedbackRefused). */
function refusalBody(status: number, codes: FeedbackErrorCode[], requestId: string, message?: string) {
  const code: ErrorCode = status in apiCodes ? apiCodes[status as keyof typeof apiCodes] : status >= 500 ? 'internal_error' : 'validation_error'
  return { success: false as const, 'error-codes': codes, ...errorBody(code, requestId, message) }
}

/** The label the fields describe, or the refusal of the first wrong one. */
function labelOf(fields: Record<string, string>): NewVerificationLabel | FeedbackRefusal {
  const { label, reason = '', note = '' } = fields
  if (label === undefined || !isVerificationLabel(label)) return refuse(400, 'invalid-input-label')
  if (reason !== '' && !isLabelReason(reason)) return refuse(400, 'invalid-input-reason')
  const reasonProblem = reason === '' ? undefined : findReasonProblem(label, reason)
  if (reasonProblem !== undefined) return new FeedbackRefusal(400, ['invalid-input-reason'], reasonProblem)
  const noteProblem = findLabelNoteProblem(note)
  if (noteProblem !== undefined) return new FeedbackRefusal(400, ['invalid-input-note'], noteProblem)
  return { label, reason: reason === '' ? null : reason, note: note === '' ? null : note, source: 'siteverify' }
}

/**
 * POST /api/v1/siteverify/feedback: a site's backend says what a visitor turned out to be, days
 * later (a chargeback, a passed second factor), with the site's secret as for Siteverify. The
 * verification is named by its token (the MAC is checked; not its age nor whether it was redeemed)
 * or by the verification_id Siteverify answered. Not a Siteverify path: its failures are HTTP
 * errors, with a body a Siteverify client reads alike (success, error-codes).
 */
const feedbackRoutes: FastifyPluginAsyncTypebox = async (app) => {
  acceptFormFields(app)
  const sites = createSiteRepository(app.database)
  const labels = createVerificationLabelRepository(app.database)
  const tokenKey = app.keyRing.macKeyFor('token')

  app.setErrorHandler((error, request, reply) => {
    const status = (error as { statusCode?: number }).statusCode ?? 500
    if (status >= 500) app.logFailure(request, error as Error, 'siteverify feedback failed')
    const sent = status >= 500 ? 500 : status
    return reply.code(sent).send(refusalBody(sent, [status >= 500 ? 'internal-error' : 'bad-request'], request.id))
  })

  /** The site the secret opens, and the verification the fields name on it. */
  async function siteAndNameOf(fields: Record<string, string>, now: number): Promise<{ site: Site; name: LabelTargetName } | FeedbackRefusal> {
    const { secret = '', response = '', verification_id: verificationId = '' } = fields
    if (response === '') {
      const site = await siteOpenedBy(sites, secret, now)
      if (site === undefined) return refuse(401, 'invalid-input-secret')
      // After the secret: only the site's backend learns that its id is malformed rather than unknown.
      if (!isVerificationId(verificationId)) return invalidVerificationId()
      return { site, name: { verificationId: verificationId.toLowerCase() } }
    }
    // Expired or not, redeemed or not: only the MAC matters, feedback comes days later.
    const reading = readToken(tokenKey, response, now)
    if (reading.outcome === 'invalid') return refuse(400, 'invalid-input-response')
    const site = await app.siteCache.findBySiteKey(reading.claims.siteKey)
    if (site?.id !== reading.claims.siteId) return refuse(400, 'invalid-input-response')
    if (!acceptsSecretKey(site, secret, now)) return refuse(401, 'invalid-input-secret')
    if (verificationId !== '' && !isVerificationId(verificationId)) return invalidVerificationId()
    if (verificationId !== '' && verificationId.toLowerCase() !== reading.claims.challengeId) return refuse(400, 'invalid-input-response')
    return { site, name: { verificationId: reading.claims.challengeId } }
  }

  async function applyFeedback(fields: Record<string, string>, now: number) {
    const missing: FeedbackErrorCode[] = [
      ...((fields.secret ?? '') === '' ? (['missing-input-secret'] as const) : []),
      ...((fields.response ?? '') === '' && (fields.verification_id ?? '') === '' ? (['missing-input-response'] as const) : []),
      ...((fields.label ?? '') === '' ? (['missing-input-label'] as const) : []),
    ]
    if (missing.length > 0) return refuse(400, ...missing)
    const label = labelOf(fields)
    if (label instanceof FeedbackRefusal) return label
    const named = await siteAndNameOf(fields, now)
    if (named instanceof FeedbackRefusal) return named
    // Unknown, another site's, and past the log's retention (deleted) answer alike.
    const target = await labels.findTarget(named.site.id, named.name)
    const change = target === undefined ? undefined : await labels.setLabel(named.site.id, target.id, label, new Date(now))
    if (target === undefined || change === undefined) return refuse(404, 'not-found')
    await followLabel(app, named.site.id, target, label, change.previous)
    return { success: true as const, verification_id: target.verificationId, label: label.label }
  }

  app.post(
    FEEDBACK_PATH,
    {
      schema: {
        tags: ['server-side'],
        summary: 'Siteverify feedback: label a verification legitimate or fraudulent (as reCAPTCHA Enterprise\'s annotateAssessment)',
        description:
          'With the site\'s secret, name the verification by its token (expired or redeemed ones too) or by metadata.verification_id, and say what the visitor turned out to be. ' +
          'Labeling again replaces the label. A verification of another site, or older than the log\'s retention, is not-found. ' +
          'A label changed to fraudulent on a verification younger than 30 minutes makes the next challenges of the same client harder for up to 30 minutes ' +
          '(an older one\'s address may have changed hands; a repeat of the same label adds nothing; ' +
          'if that step fails after the label is saved, the call still succeeds and the failure is logged). ' +
          'JSON or form-urlencoded body only: multipart is 415, the query string is not read, an empty body is 400. ' +
          'Bytes or a form\'s %-escapes that are not UTF-8 are 400 bad-request, a charset the body would be read wrong under 415. ' +
          "The documented test secrets answer 401 invalid-input-secret. A verification_id that is not a UUID answers 400 invalid-input-verification-id (validation_error). " +
          'A reason must go with the label (legitimate: initiated_two_factor, passed_two_factor, correct_password, other), else 400 invalid-input-reason. ' +
          "A token is checked with the key derived from TOLLGATE_SECRET: after that secret changes, earlier tokens are invalid-input-response; name those verifications by verification_id.",
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        body: FeedbackBody,
        response: { 200: FeedbackAccepted, 400: FeedbackRefused, 401: FeedbackRefused, 404: FeedbackRefused, 413: FeedbackRefused, 415: FeedbackRefused, 500: FeedbackRefused },
      },
    },
    async (request, reply) => {
      void reply.header('cache-control', 'no-store')
      const outcome = await applyFeedback(fieldsOf({}, request.body), Date.now())
      if (outcome instanceof FeedbackRefusal) return reply.code(outcome.status).send(refusalBody(outcome.status, outcome.codes, request.id, outcome.message))
      return outcome
    },
  )
}

export default feedbackRoutes

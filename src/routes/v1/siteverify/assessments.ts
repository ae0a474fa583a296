import { randomUUID } from 'node:crypto'
import { Type } from 'typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { assessmentOf, type AssessmentEvent } from '../../../domain/siteverify/assessment.js'
import type { Redemption, SiteverifyRequest } from '../../../domain/siteverify/redeem-token.js'

/** reCAPTCHA Enterprise's createAssessment, at Google's path: a backend changes only its host. */
export const ASSESSMENTS_PATH = '/v1/projects/:project/assessments'

const eventFields = {
  token: Type.Optional(Type.String({ description: 'The token from the page (Google\'s `g-recaptcha-response`)' })),
  siteKey: Type.Optional(Type.String({ description: 'When sent (not empty), must be the site key the token was issued for (else valid false)' })),
  expectedAction: Type.Optional(Type.String({ description: 'Echoed only: as Google, a different action does not make the token invalid; compare tokenProperties.action' })),
  userIpAddress: Type.Optional(Type.String({ description: 'Echoed, not checked' })),
  userAgent: Type.Optional(Type.String({ description: 'Echoed, not checked' })),
}

const AssessmentBody = Type.Object({
  event: Type.Object(eventFields, { description: "Google's Event; its other fields are ignored" }),
})

const AssessmentQuery = Type.Object({
  key: Type.Optional(Type.String({ description: "The site's secret key (tgs_...) where Google takes its API key; or send it in the `X-Goog-Api-Key` header, or as `Authorization: Bearer tgs_...`" })),
})

/** The key's three ways, as the document's security schemes (plugins/docs.ts): any one of them. */
const assessmentSecurity: Record<string, string[]>[] = [{ googleApiKey: [] }, { googleApiKeyHeader: [] }, { secretKeyBearer: [] }]

const AssessmentParams = Type.Object({ project: Type.String({ minLength: 1, maxLength: 100, description: "Any project id: it only names the assessment (up to 100 characters, the router's limit for a path parameter)" }) })

const AssessmentResult = Type.Object({
  name: Type.String({ description: "projects/{project}/assessments/{id}: the id is the verification's (metadata.verification_id of Siteverify) when the token was valid" }),
  event: Type.Object({ token: Type.String(), siteKey: Type.String(), expectedAction: Type.String(), userIpAddress: Type.String(), userAgent: Type.String() }),
  riskAnalysis: Type.Object({
    score: Type.Number({ minimum: 0, maximum: 1, description: "Siteverify's score ((100 - riskScore) / 100); 0 when the token is not valid" }),
    reasons: Type.Array(Type.String(), { description: 'Always empty (the anomalies are in Siteverify\'s answer)' }),
  }),
  tokenProperties: Type.Object({
    valid: Type.Boolean(),
    invalidReason: Type.String({ enum: ['INVALID_REASON_UNSPECIFIED', 'UNKNOWN_INVALID_REASON', 'MALFORMED', 'EXPIRED', 'DUPE', 'MISSING'] }),
    hostname: Type.String({ description: "The page's hostname, as Siteverify's hostname; empty when not valid, and when the page named no host (Siteverify's null: docs/apps.md)" }),
    action: Type.String({ description: "Siteverify's action: the page's action name, else allow; empty when not valid" }),
    createTime: Type.Optional(Type.String({ format: 'date-time', description: 'When the token was issued; absent when not valid' })),
  }),
})

const googleErrorFields = { error: Type.Object({ code: Type.Integer(), message: Type.String(), status: Type.String() }) }

/** Google's error body, described for the status it answers. */
const googleErrorBody = (description: string) => Type.Object(googleErrorFields, { description: `Google's error body: ${description}` })

type GoogleStatus = 'INVALID_ARGUMENT' | 'PERMISSION_DENIED' | 'INTERNAL'

function googleError(reply: FastifyReply, code: 400 | 403 | 500, status: GoogleStatus, message: string) {
  return reply.code(code).send({ error: { code, message, status } })
}

const INVALID_ARGUMENT_MESSAGE = 'Request contains an invalid argument.'

/** Any URL of createAssessment's path, whatever its project: the router may refuse it before the route runs. */
const assessmentsUrl = /^\/v1\/projects\/[^/?#]*\/assessments(?:[?#]|$)/

/**
 * Google's answer to a POST to this path that the router refuses before the route runs (a project
 * longer than any id, a percent-encoding that does not decode): its 400 INVALID_ARGUMENT, as the
 * route answers every other bad request, not the API's error shape. False for any other request.
 */
export function answerUnroutedAssessment(request: FastifyRequest, reply: FastifyReply): boolean {
  if (request.method !== 'POST' || !assessmentsUrl.test(request.url)) return false
  void googleError(reply, 400, 'INVALID_ARGUMENT', INVALID_ARGUMENT_MESSAGE)
  return true
}

/**
 * The key of the call: Google's `?key=` (REST examples) or `X-Goog-Api-Key` header (its client
 * libraries), or a bearer token; the first that is not empty.
 */
function keyOf(request: FastifyRequest<{ Querystring: { key?: string } }>): string {
  const header = request.headers['x-goog-api-key']
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1]
  return request.query.key || (typeof header === 'string' ? header : '') || bearer || ''
}

/**
 * POST /v1/projects/{project}/assessments, Google's createAssessment: the token is redeemed once
 * by Siteverify's own redemption (`redeem`, counted as Siteverify's), its answer mapped to the
 * Assessment (src/domain/siteverify/assessment.ts). As Google, a missing key is 403
 * PERMISSION_DENIED and a wrong one 400 INVALID_ARGUMENT (API_KEY_INVALID); a wrong key does not
 * spend the token (as Siteverify's invalid-input-secret). Without a token, `isKnownKey` checks the
 * key (a site's secret key or a test secret) before the answer MISSING.
 */
export function registerAssessmentRoute(
  app: FastifyInstance,
  redeem: (fields: SiteverifyRequest) => Promise<Redemption>,
  isKnownKey: (key: string) => Promise<boolean>,
): void {
  app.post<{ Params: { project: string }; Querystring: { key?: string }; Body: { event: Partial<AssessmentEvent> } }>(
    ASSESSMENTS_PATH,
    {
      schema: {
        tags: ['server-side'],
        summary: "reCAPTCHA Enterprise's createAssessment: redeem a token once",
        description:
          'Google\'s request and Assessment, for backends written for reCAPTCHA Enterprise: authenticated with the site\'s secret key as `?key=` ' +
          'or `X-Goog-Api-Key` (as Google\'s API key) or `Authorization: Bearer` (the first not empty). A missing key answers 403 PERMISSION_DENIED, a wrong one 400 INVALID_ARGUMENT ' +
          '(API key not valid), and neither spends the token (a ' +
          'damaged token answers valid false, MALFORMED, whatever the key). A reused token is valid false, DUPE; an expired one EXPIRED; none MISSING.',
        params: AssessmentParams,
        querystring: AssessmentQuery,
        // The key is stated by the security schemes (the query's included), not as a parameter beside them.
        documentedQuerystring: Type.Object({}),
        security: assessmentSecurity,
        body: AssessmentBody,
        response: {
          200: AssessmentResult,
          400: googleErrorBody('INVALID_ARGUMENT, a key that is no site\'s secret key (API key not valid) or a request that is not valid'),
          403: googleErrorBody('PERMISSION_DENIED, no key (the query\'s key, X-Goog-Api-Key and the bearer token all missing or empty)'),
          500: googleErrorBody('INTERNAL'),
        },
      },
      // Google's error body, not Siteverify's always-200 answer nor the API's.
      errorHandler: (error, request, reply) => {
        const status = (error as { statusCode?: number }).statusCode ?? 500
        if (status < 500) {
          void googleError(reply, 400, 'INVALID_ARGUMENT', INVALID_ARGUMENT_MESSAGE)
          return
        }
        app.logFailure(request, error, 'createAssessment failed')
        void googleError(reply, 500, 'INTERNAL', 'Internal error encountered.')
      },
    },
    async (request, reply) => {
      const key = keyOf(request)
      if (key === '') return googleError(reply, 403, 'PERMISSION_DENIED', 'The request is missing a valid API key.')
      const { token = '', siteKey = '', expectedAction = '', userIpAddress = '', userAgent = '' } = request.body.event
      // Siteverify answers a call without a response before looking at its secret; Google checks the key first.
      const isKeyWrong = token === '' && !(await isKnownKey(key))
      const redemption = isKeyWrong ? undefined : await redeem({ secret: key, response: token, sitekey: siteKey, remoteip: userIpAddress })
      if (redemption === undefined || redemption.answer['error-codes'].includes('invalid-input-secret')) {
        return googleError(reply, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.')
      }
      void reply.header('cache-control', 'no-store')
      const id = redemption.answer.metadata.verification_id ?? randomUUID()
      const event = { token, siteKey, expectedAction, userIpAddress, userAgent }
      return assessmentOf(`projects/${request.params.project}/assessments/${id}`, event, redemption)
    },
  )
}

import type { TSchema } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorCodes, type FastifyReply, type FastifyRequest } from 'fastify'
import { redeemTokenOfSite, type Redemption, type RedeemTokenDependencies, type SiteverifyRequest } from '../../../domain/siteverify/redeem-token.js'
import { answerFailure } from '../../../domain/siteverify/siteverify-answer.js'
import { isTestSecret } from '../../../domain/siteverify/test-secrets.js'
import { siteOpenedBy } from '../../../domain/sites/site-keys.js'
import { addressClaimOf } from '../../../domain/token/address-binding.js'
import { acceptFormFields } from '../../../http/form-fields.js'
import { recaptchaShape, tollgateShape, turnstileShape, type AnswerShape, type VendorAnswer } from '../../../domain/siteverify/vendor-answers.js'
import { answersWithin } from '../../../storage/answers-within.js'
import { createSiteRepository } from '../../../storage/sql/site-repository.js'
import { REPORTED_MISMATCH_OUTCOME } from '../../../storage/sql/siteverify-count-repository.js'
import { registerAssessmentRoute } from './assessments.js'
import { acceptMultipartFields } from './multipart-fields.js'
import {
  OwnSiteverifyBody,
  OwnSiteverifyQuery,
  SiteverifyBody,
  SiteverifyQuery,
  SiteverifyResult,
  TurnstileSiteverifyResult,
  VendorSiteverifyResult,
  type SiteverifyFields,
  type SiteverifyQueryFields,
} from './schemas.js'

/** How long one probe of the store's health answers for calls without a response. */
const STORAGE_HEALTH_REUSE_MS = 1_000
const DATABASE_PROBE_TIMEOUT_MS = 2_000

/** The canonical path and the vendors' paths, so that code written for them only changes its host. */
export const siteverifyPaths = ['/api/v1/siteverify', '/turnstile/v0/siteverify', '/siteverify', '/recaptcha/api/siteverify']

/** How each path words its answer: the vendors' paths answer failures in the vendors' shape (vendor-answers.ts). */
const shapeOfPath = new Map<string, AnswerShape>([
  ['/api/v1/siteverify', tollgateShape],
  ['/turnstile/v0/siteverify', turnstileShape],
  ['/siteverify', recaptchaShape],
  ['/recaptcha/api/siteverify', recaptchaShape],
])

/**
 * The call's fields, the body's over the query string's. A field sent as JSON null is absent
 * (schemas.ts): the query string's value applies, and a secret or response sent so answers
 * missing-input-*, as from a form that lacked it. Only text is kept: the schemas allow a known
 * field nothing else, and unknown fields are ignored anyway.
 */
export function fieldsOf<Fields extends object>(query: SiteverifyQueryFields, body: Fields | undefined): SiteverifyRequest & Record<string, string> {
  const fields: Record<string, string> = {}
  for (const [name, value] of [...Object.entries(query), ...Object.entries(body ?? {})]) {
    if (typeof value === 'string') fields[name] = value
  }
  return fields
}

const siteverifyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Server-side callers send JSON (built in), form-urlencoded (reCAPTCHA, hCaptcha) or multipart
  // form data (Turnstile's FormData example); for multipart only fields are read, a file is refused.
  acceptFormFields(app)
  acceptMultipartFields(app, { fields: 20, fieldSize: 4096 })

  // Siteverify always answers 200 with its own body (DESIGN section 6): a body that cannot be read
  // is bad-request, a failure of ours is internal-error.
  app.setErrorHandler((error, request, reply) => {
    const status = (error as { statusCode?: number }).statusCode ?? 500
    const answer = status < 500 ? answerFailure('bad-request') : answerFailure('internal-error')
    if (status >= 500) app.logFailure(request, error as Error, 'siteverify failed')
    app.counters.increment('siteverify', { result: answer['error-codes'][0] ?? 'bad-request' })
    const shape = shapeOfPath.get(request.routeOptions.url ?? '') ?? tollgateShape
    return reply.code(200).send(shape(answer))
  })

  // A body of no bytes is no body, whatever its Content-Type says (clients send their default
  // one with the fields in the query string): Fastify then parses nothing, so a type no parser
  // takes (text/plain) is not refused either. The JSON and multipart parsers take an empty body
  // sent chunked, whose length is not known here, as none too, and so does the catch-all below.
  app.addHook('onRequest', (request, _reply, done) => {
    const { headers } = request
    const hasNoBody = headers['transfer-encoding'] === undefined && (headers['content-length'] === undefined || headers['content-length'] === '0')
    if (hasNoBody) delete headers['content-type']
    done()
  })

  // Any other type: a body sent chunked that turns out empty is none too (its length was not known
  // to the hook above); a body with bytes in it is refused as Fastify would (bad-request).
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    if (body.length === 0) done(null, undefined)
    else done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(request.headers['content-type'] ?? ''), undefined)
  })

  // A POST without a body is a request without fields (missing-input-*), not a malformed one.
  app.addHook('preValidation', (request, _reply, done) => {
    request.body ??= {}
    done()
  })

  // One probe of the stores a second at most, however many calls come without a response (a bot's
  // form posts each bring one). The key-value store's own command timeout bounds its probe; the
  // database's is bounded here (a connection attempt to a host that is gone can take far longer).
  // Either one away makes challenges answer 503, so either one is an outage for the page.
  let storageHealth: { checkedAt: number; isDown: Promise<boolean> } | undefined

  const sites = createSiteRepository(app.database)
  // Built once: a closure made per request costs more than it looks under tsx (esbuild's keepNames
  // wraps every named function expression in a helper call that sets its name).
  const dependencies: RedeemTokenDependencies = {
    store: app.keyValue,
    tokenKey: app.keyRing.macKeyFor('token'),
    findSite: (siteKey) => app.siteCache.findBySiteKey(siteKey),
    // A store that starts empty (the in-process one, with the process) or lost its data (Redis
    // restarted without persistence) may have forgotten redemptions: tokens of its earlier data are refused.
    remembersRedemptionsSince: () => app.keyValue.remembersSince(),
    dataEpoch: () => app.keyValue.dataEpoch(),
    isStorageDown: () => {
      const now = Date.now()
      if (storageHealth === undefined || now - storageHealth.checkedAt > STORAGE_HEALTH_REUSE_MS) {
        const probes = [app.keyValue.ping(), answersWithin(app.database.ping(), DATABASE_PROBE_TIMEOUT_MS)]
        storageHealth = { checkedAt: now, isDown: Promise.all(probes).then(() => false, () => true) }
      }
      return storageHealth.isDown
    },
    // Keyed as the public gate tags the address group a token is earned from (verify's claim).
    claimAddress: (ip) => addressClaimOf(ip, app.clientTags.ofAddress),
  }

  /** Counts a redemption by its result; every path that redeems a token (the vendors' and createAssessment) does. */
  const countRedemption = (fields: SiteverifyRequest, { answer, countedFor, reason }: Redemption): void => {
    // A test secret's fixed answer says nothing about real redemptions: counted apart. A token
    // refused for its address answers invalid-input-response, as a damaged one; counted apart too.
    const result = isTestSecret(fields.secret) ? 'test' : answer.success ? 'success' : reason === 'address-mismatch' ? 'remoteip-mismatch' : (answer['error-codes'][0] ?? 'unknown')
    app.counters.increment('siteverify', { result })
    if (countedFor !== undefined) app.siteverifyCounts.count(countedFor, result)
    // Redeemed, from another address: what a site that reports mismatches would refuse once it
    // refuses them, counted beside the success (which it also is) for the site to weigh first.
    if (answer.success && answer.remoteipMatch === false && result === 'success') {
      app.counters.increment('siteverifyRemoteipReported', {})
      if (countedFor !== undefined) app.siteverifyCounts.count(countedFor, REPORTED_MISMATCH_OUTCOME)
    }
  }

  registerAssessmentRoute(app, async (fields) => {
    const redemption = await redeemTokenOfSite(dependencies, fields, app.keyValue.now())
    countRedemption(fields, redemption)
    return redemption
  }, async (key) => {
    return isTestSecret(key) || (await siteOpenedBy(sites, key, Date.now())) !== undefined
  })

  for (const path of siteverifyPaths) {
    const shape = shapeOfPath.get(path) ?? tollgateShape
    // Either answer schema: the handler's answer is typed by its shape (VendorAnswer), not by the schema.
    const isOwnPath = shape === tollgateShape
    const resultSchema: TSchema = isOwnPath ? SiteverifyResult : shape === turnstileShape ? TurnstileSiteverifyResult : VendorSiteverifyResult
    const querySchema = isOwnPath ? OwnSiteverifyQuery : SiteverifyQuery
    const redeem = async (request: FastifyRequest<{ Querystring: SiteverifyQueryFields; Body?: SiteverifyFields }>, reply: FastifyReply): Promise<VendorAnswer> => {
      const fields = fieldsOf(request.query, request.body)
      // Friendly Captcha v1's siteverify is at this same path and names the token `solution`.
      if (isOwnPath && fields.response === undefined) fields.response = fields.solution
      // By the store's clock, as tokens are stamped (judgeSubmission): every instance judges a token alike.
      const redemption = await redeemTokenOfSite(dependencies, fields, app.keyValue.now())
      countRedemption(fields, redemption)
      void reply.header('cache-control', 'no-store')
      return shape(redemption.answer)
    }
    const summary = path === siteverifyPaths[0] ? 'Siteverify: redeem a token once (Turnstile-compatible)' : `Siteverify at the vendor path ${path}`
    app.post(
      path,
      {
        schema: {
          tags: ['server-side'],
          summary,
          description:
            'JSON, form-urlencoded or multipart, as UTF-8; a JSON null is the field absent. Always answers 200; failures list error-codes (an unreadable body, ' +
            'its Content-Type included, is bad-request: bytes or a form\'s %-escapes that are not UTF-8, a charset it would be read wrong under). ' +
            'A wrong secret (invalid-input-secret) or a sitekey that is not the token\'s (invalid-input-response) ' +
            'does not spend the token, nor does a remoteip a site that refuses tokens of other addresses refuses (tokenAddressCheck); the test secrets ignore sitekey, remoteip and idempotency_key. Only a successful redemption is replayed to a retry with its ' +
            'idempotency_key (docs/core-flow.md, section 6). Any method but POST and GET, HEAD included, answers 405 method_not_allowed (Allow: POST, GET).',
          consumes: ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'],
          body: isOwnPath ? OwnSiteverifyBody : SiteverifyBody,
          // reCAPTCHA's server also takes its fields in the query string of the POST, and some
          // clients send them there; a field in the body wins over the same one in the query.
          querystring: querySchema,
          optionalBody: true,
          response: { 200: resultSchema },
        },
      },
      redeem,
    )
    // Google's server answers a GET with the fields in the query string too, and much reCAPTCHA
    // code calls it so (PHP's file_get_contents, axios.get). Query strings of these paths are
    // never logged (src/log-serializers.ts).
    app.get(
      path,
      {
        // A HEAD would spend the token and show nobody the answer (a link checker, a prober).
        exposeHeadRoute: false,
        schema: {
          tags: ['server-side'],
          summary: `${summary}, fields in the query string (as reCAPTCHA's server takes them)`,
          description:
            'Prefer POST: a secret in a URL may be kept by proxies on the way. Always answers 200; failures list error-codes. ' +
            'A HEAD is not Siteverify: 405 method_not_allowed (Allow: POST, GET).',
          querystring: querySchema,
          response: { 200: resultSchema },
        },
      },
      redeem,
    )
  }
}

export default siteverifyRoutes

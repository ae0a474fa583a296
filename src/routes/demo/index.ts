import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { acceptFormFields } from '../../http/form-fields.js'
import { demoStyles, renderDemoPage, renderNoDemoSite, renderOutcome, type DemoOutcome } from './demo-page.js'

/**
 * The demo page's policy: the strict one sdk/README.md recommends for a site that serves the
 * SDK from its own origin. No 'unsafe-inline', no 'unsafe-eval', no 'wasm-unsafe-eval' (the
 * WebAssembly is compiled inside the worker, under the worker's own policy).
 */
const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "connect-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

const htmlHeaders = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': contentSecurityPolicy,
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
}

const DemoSubmission = Type.Object({
  'tollgate-token': Type.Optional(Type.String({ maxLength: 4096 })),
  form: Type.Optional(Type.String({ maxLength: 40 })),
}, { additionalProperties: Type.String({ maxLength: 2000 }) })

/** The fields of the Siteverify answer (DESIGN section 6) that the demo shows. */
interface SiteverifyAnswer {
  success: boolean
  'error-codes': string[]
  action?: string
  riskScore?: number
  hostname?: string
  challenge_ts?: string
  remoteipMatch?: boolean | null
}

const Html = Type.String({ description: 'An HTML page' })

/**
 * GET /demo: a page with two forms protected by the SDK (the development demo site's key).
 * POST /demo: what a site's backend does with the token: redeem it with Siteverify (here through
 * the service's own route, in process) and act on the answer; the page shows that answer.
 * Registered only outside production.
 */
const demoRoutes: FastifyPluginAsyncTypebox = async (app) => {
  acceptFormFields(app)

  const demoSite = () => (app.hasDecorator('demoSite') ? app.demoSite : undefined)

  app.get('/demo', {
    schema: { tags: ['demo'], summary: 'A form protected by the SDK (not in production)', produces: ['text/html'], response: { 200: Html } },
  }, async (request, reply) => {
    const site = demoSite()
    const origin = `${request.protocol}://${request.host}`
    return reply.headers(htmlHeaders).send(site === undefined ? renderNoDemoSite() : renderDemoPage(site.siteKey, origin))
  })

  app.get('/demo/demo.css', {
    schema: { tags: ['demo'], summary: 'The demo page\'s styles', produces: ['text/css'], response: { 200: Type.String() } },
  }, async (_request, reply) => {
    return reply.headers({ 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=3600' }).send(demoStyles)
  })

  app.post('/demo', {
    schema: {
      tags: ['demo'],
      summary: 'Redeems the form\'s token with Siteverify and shows the answer',
      consumes: ['application/x-www-form-urlencoded'],
      body: DemoSubmission,
      produces: ['text/html'],
      response: { 200: Html },
    },
  }, async (request, reply) => {
    const site = demoSite()
    if (site === undefined) return reply.headers(htmlHeaders).send(renderNoDemoSite())
    const verification = await app.inject({
      method: 'POST',
      url: '/api/v1/siteverify',
      payload: { secret: site.secretKey, response: request.body['tollgate-token'] ?? '', remoteip: request.ip },
    })
    const answer = verification.json<SiteverifyAnswer>()
    const outcome: DemoOutcome = {
      form: request.body.form ?? 'unknown',
      success: answer.success,
      errorCodes: answer['error-codes'],
      action: answer.action,
      riskScore: answer.riskScore,
      hostname: answer.hostname,
      challengeTs: answer.challenge_ts,
      remoteipMatch: answer.remoteipMatch,
    }
    request.log.info({ success: outcome.success, errorCodes: outcome.errorCodes, form: outcome.form }, 'demo form redeemed its token')
    return reply.headers(htmlHeaders).send(renderOutcome(outcome))
  })
}

export default demoRoutes

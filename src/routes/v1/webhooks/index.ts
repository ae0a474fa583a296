import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { consumeRateLimit } from '../../../domain/rate-limit.js'
import type { SiteRole } from '../../../domain/sites/site-roles.js'
import { ApiError } from '../../../errors.js'
import type { WebhookDelivery } from '../../../storage/sql/webhook-delivery-repository.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams } from '../dashboard-schemas.js'
import { VERIFICATION_BLOCKED, WEBHOOK_EVENTS } from '../../../domain/webhooks/webhook-payload.js'
import { logPageQuery, pageOf, positionOf } from '../log-pages.js'
import { stringEnum } from '../public-schemas.js'

const DEFAULT_LIST_SIZE = 50
const MAX_LIST_SIZE = 100
/** Test sends make Tollgate open connections on request; a small budget keeps that from being abused. */
const testSendLimit = { limit: 10, windowMs: 60_000 }

const Delivery = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Also sent as X-Service-Delivery and webhook-id' }),
  event: stringEnum(WEBHOOK_EVENTS, { description: 'The event kind' }),
  url: Type.String({ description: "Where it was sent; for a viewer of a shared site only the URL's origin (scheme, host and port), as the site's webhookUrl is hidden from it" }),
  test: Type.Boolean({ description: 'Whether it was a test send (POST .../webhook/test)' }),
  verificationId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description:
      "The blocked verification a verification.blocked delivery told of (the payload's data.verificationId: its row's id in the site's verification log, found with GET .../verifications?verificationId=); " +
      'null for surge events, test sends, dropped counts and deliveries recorded before it was kept',
  }),
  outcome: Type.Union([Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('timeout'), Type.Literal('refused'), Type.Literal('dropped')], {
    description:
      'delivered (2xx), failed (another status, or no connection), timeout (no answer within 10 s), refused (not sent: address or URL not allowed, or no usable secret), dropped (events not sent because too many deliveries were in flight; error says how many)',
  }),
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status; null without an answer" }),
  latencyMs: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why it was not delivered' }),
  createdAt: Type.String({ format: 'date-time' }),
})

/** The origin of a URL a viewer is shown: the path and query of a Slack-style webhook URL are its credential. */
function originOf(url: string): string {
  try {
    return new URL(url).origin
  } catch {
    return ''
  }
}

function deliveryView(delivery: WebhookDelivery, role: SiteRole): Type.Static<typeof Delivery> {
  return {
    id: delivery.id,
    event: delivery.event,
    url: role === 'viewer' ? originOf(delivery.url) : delivery.url,
    test: delivery.isTest,
    verificationId: delivery.verificationId,
    outcome: delivery.outcome,
    statusCode: delivery.statusCode,
    latencyMs: delivery.latencyMs,
    error: delivery.error,
    createdAt: delivery.createdAt.toISOString(),
  }
}

/** The delivery log and the test send of a site's webhook (DESIGN sections 3 and 7). */
const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/sites/:id/webhook-deliveries',
    {
      schema: {
        tags: ['dashboard'],
        summary: "The site's recent webhook deliveries, newest first",
        description: 'The newest 1000 deliveries of the last 30 days are kept. Pass nextCursor back as cursor for the next page; it is null on the last page.',
        security: dashboardSecurity,
        params: IdParams,
        querystring: Type.Object({
          ...logPageQuery(DEFAULT_LIST_SIZE, MAX_LIST_SIZE),
        }),
        response: {
          200: Type.Object({ items: Type.Array(Delivery), nextCursor: Type.Union([Type.String(), Type.Null()]) }),
          400: ErrorResponse,
          404: ErrorResponse,
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const { site, role } = await app.findSite(request, request.params.id, 'read')
      const limit = request.query.limit ?? DEFAULT_LIST_SIZE
      const rows = await app.webhooks.deliveries.listPage(site.id, limit + 1, positionOf(request.query.cursor))
      const { page, nextCursor } = pageOf(rows, limit, (row) => row.position)
      return { items: page.map((row) => deliveryView(row.delivery, role)), nextCursor }
    },
  )

  app.post(
    '/sites/:id/webhook/test',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Send a signed test event to the webhook now and report the outcome',
        description:
          'Sends a payload of the event kind asked for (verification.blocked unless ?event= names another), marked "test": true, signed like every webhook, and waits for the answer (at most 10 s). ' +
          'It is sent whether or not the site\'s webhookEvents list the kind. ' +
          'The answer is 200 whatever the outcome; the delivery is also listed in webhook-deliveries. ' +
          'Ten test sends a minute per site, and at most 5 in flight per account and 25 per instance (in slots apart from those of real events); beyond, 429 rate_limited with Retry-After.',
        security: dashboardSecurity,
        params: IdParams,
        querystring: Type.Object({
          event: Type.Optional(stringEnum(WEBHOOK_EVENTS, { description: `The kind of event to send a sample of; ${VERIFICATION_BLOCKED} by default` })),
        }),
        response: { 200: Delivery, 400: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
        errorCodes: ['webhook_not_configured'],
      },
    },
    async (request) => {
      const { site, role } = await app.findSite(request, request.params.id, 'manage')
      if (site.settings.webhookUrl === null || site.webhookSecretCiphertext === null) throw new ApiError('webhook_not_configured')
      const admit = async () => {
        const verdict = await consumeRateLimit(app.keyValue, `webhook-test:{${site.id}}`, testSendLimit)
        if (!verdict.isAllowed) {
          throw new ApiError('rate_limited', 'Too many test sends for this site; retry later.', undefined, {
            'retry-after': String(verdict.retryAfterSeconds),
          })
        }
      }
      return deliveryView(await app.webhooks.sendTest(site, admit, request.query.event), role)
    },
  )
}

export default webhookRoutes

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { consumeRateLimit } from '../../../domain/rate-limit.js'
import type { SiteRole } from '../../../domain/sites/site-roles.js'
import { ApiError } from '../../../errors.js'
import { isUuid } from '../../../domain/uuid.js'
import type { DeliveryOutcome } from '../../../domain/webhooks/delivery-result.js'
import type { KeyValueStore } from '../../../storage/ports.js'
import type { WebhookDelivery } from '../../../storage/sql/webhook-delivery-repository.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams } from '../dashboard-schemas.js'
import { VERIFICATION_BLOCKED, WEBHOOK_EVENTS } from '../../../domain/webhooks/webhook-payload.js'
import { logPageQuery, pageOf, positionOf } from '../log-pages.js'
import { named } from '../named-schemas.js'
import { stringEnum } from '../public-schemas.js'

const DEFAULT_LIST_SIZE = 50
const MAX_LIST_SIZE = 100
/**
 * Test sends and resends make Tollgate open connections on request; a small budget of each keeps
 * that from being abused (apart, so that trying a receiver does not use up resending to it).
 */
const operatorSendLimit = { limit: 10, windowMs: 60_000 }
const OUTCOMES = ['delivered', 'failed', 'timeout', 'refused', 'dropped'] as const satisfies readonly DeliveryOutcome[]

const Delivery = named('WebhookDelivery', Type.Object({
  id: Type.String({ format: 'uuid', description: "Also sent as X-Service-Delivery, webhook-id and the body's id (but by a resend, which sends its redeliveryOf)" }),
  event: stringEnum(WEBHOOK_EVENTS, { description: 'The event kind' }),
  url: Type.String({ description: "Where it was sent; for a viewer of a shared site only the URL's origin (scheme, host and port), as the site's webhookUrl is hidden from it" }),
  test: Type.Boolean({ description: 'Whether it was a test send (POST .../webhook/test)' }),
  verificationId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description:
      "The blocked verification a verification.blocked delivery told of (the payload's data.verificationId: its row's id in the site's verification log, found with GET .../verifications?verificationId=); " +
      'null for surge events, test sends, dropped counts and deliveries recorded before it was kept',
  }),
  redeliveryOf: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description:
      "For a resend (POST .../webhook-deliveries/{deliveryId}/redeliver), the id of the event's first delivery: the id this resend sent again, in the body and as X-Service-Delivery and webhook-id. Null for every other delivery",
  }),
  outcome: stringEnum(OUTCOMES, {
    description:
      'delivered (2xx), failed (another status, or no connection), timeout (no answer within 10 s: the receiver may still have got the event and acted on it), refused (not sent: address or URL not allowed, or no usable secret), dropped (events not sent because too many deliveries were in flight; error says how many)',
  }),
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status; null without an answer" }),
  latencyMs: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why it was not delivered' }),
  createdAt: Type.String({ format: 'date-time' }),
}))

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
    redeliveryOf: delivery.redeliveryOf,
    outcome: delivery.outcome,
    statusCode: delivery.statusCode,
    latencyMs: delivery.latencyMs,
    error: delivery.error,
    createdAt: delivery.createdAt.toISOString(),
  }
}

/** The budget `admit` of an operator's send: 429 rate_limited beyond `operatorSendLimit` a minute for the site. */
function operatorBudget(keyValue: KeyValueStore, key: string, what: string): () => Promise<void> {
  return async () => {
    const verdict = await consumeRateLimit(keyValue, key, operatorSendLimit)
    if (!verdict.isAllowed) {
      throw new ApiError('rate_limited', `Too many ${what} for this site; retry later.`, undefined, {
        'retry-after': String(verdict.retryAfterSeconds),
      })
    }
  }
}

/** The delivery log, the test send and the resend of a site's webhook (DESIGN sections 3 and 7). */
const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/sites/:id/webhook-deliveries',
    {
      schema: {
        tags: ['dashboard'],
        summary: "The site's recent webhook deliveries, newest first",
        description:
          'The newest 1000 deliveries of the last 30 days are kept. Pass nextCursor back as cursor for the next page; it is null on the last page. ' +
          '?outcome= and ?event= list only the deliveries of that outcome or event kind (both: of both).',
        security: dashboardSecurity,
        params: IdParams,
        querystring: Type.Object({
          limit: Type.Optional(
            Type.Integer({ minimum: 1, maximum: MAX_LIST_SIZE, default: DEFAULT_LIST_SIZE, description: `How many deliveries a page holds, ${DEFAULT_LIST_SIZE} by default, ${MAX_LIST_SIZE} at most` }),
          ),
          cursor: logPageQuery(DEFAULT_LIST_SIZE, MAX_LIST_SIZE).cursor,
          outcome: Type.Optional(stringEnum(OUTCOMES, { description: 'Only the deliveries of this outcome, such as failed (the ones a receiver missed: also timeout)' })),
          event: Type.Optional(stringEnum(WEBHOOK_EVENTS, { description: 'Only the deliveries of this event kind' })),
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
      const { outcome, event } = request.query
      const rows = await app.webhooks.deliveries.listPage(site.id, { limit: limit + 1, after: positionOf(request.query.cursor), outcome, event })
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
      const admit = operatorBudget(app.keyValue, `webhook-test:{${site.id}}`, 'test sends')
      return deliveryView(await app.webhooks.sendTest(site, admit, request.query.event), role)
    },
  )

  app.post(
    '/sites/:id/webhook-deliveries/:deliveryId/redeliver',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Send the event of a delivery again now and report the outcome',
        description:
          "Sends the verification.blocked event a delivery told of again, to the site's current webhookUrl, signed as a new event is (with its current webhookSecret, and during a secret rotation's 24-hour overlap with the replaced one too: two webhook-signature entries), and waits for the answer (at most 10 s). " +
          "The event is rebuilt from the blocked verification's row in the site's verification log, with the same fields as when it was first sent, " +
          "under the same id (body id, X-Service-Delivery, webhook-id: a receiver that got it already answers it 2xx as a duplicate, without acting on it again), its timestamp still the time of the block, " +
          'plus redeliveredAt (this sending) and a fresh webhook-timestamp. Any delivery of a real block can be resent, whatever its outcome; a resend of a resend sends the same event. ' +
          'The answer is 200 with the new delivery (redeliveryOf: the first delivery\'s id) whatever its outcome; it is also listed in webhook-deliveries. ' +
          '404 for a delivery the site\'s log does not list; 409 webhook_event_not_redeliverable for a surge event, a test send or a count of dropped events; 410 webhook_event_expired once the verification\'s row is gone from the log (its retention, or a visitor\'s erasure, removed it). ' +
          'Ten resends a minute per site, and the test sends\' slots (5 in flight per account, 25 per instance); beyond, 429 rate_limited with Retry-After. Operator-initiated only: Tollgate never retries on its own.',
        security: dashboardSecurity,
        params: Type.Object({
          id: IdParams.properties.id,
          deliveryId: Type.String({ description: "The delivery's id (a UUID) in the site's delivery log" }),
        }),
        response: { 200: Delivery, 404: ErrorResponse, 409: ErrorResponse, 410: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
        errorCodes: ['webhook_not_configured', 'webhook_event_not_redeliverable', 'webhook_event_expired'],
      },
    },
    async (request) => {
      const { site, role } = await app.findSite(request, request.params.id, 'manage')
      const { deliveryId } = request.params
      const original = isUuid(deliveryId) ? await app.webhooks.deliveries.findListed(site.id, deliveryId.toLowerCase()) : undefined
      if (original === undefined) throw new ApiError('not_found', "The site's delivery log lists no delivery with this id.")
      if (site.settings.webhookUrl === null || site.webhookSecretCiphertext === null) throw new ApiError('webhook_not_configured')
      const admit = operatorBudget(app.keyValue, `webhook-redeliver:{${site.id}}`, 'resends')
      return deliveryView(await app.webhooks.redeliver(site, original, admit), role)
    },
  )
}

export default webhookRoutes

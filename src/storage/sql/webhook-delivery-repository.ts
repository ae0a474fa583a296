import type { LogCursor } from '../../domain/analytics/log-cursor.js'
import type { DeliveryOutcome } from '../../domain/webhooks/delivery-result.js'
import type { WebhookEvent } from '../../domain/webhooks/webhook-payload.js'
import type { SqlExecutor } from '../ports.js'
import { CREATED_AT_MICROS, newestFirstPage, where } from './keyset.js'

export interface WebhookDelivery {
  id: string
  siteId: string
  event: WebhookEvent
  url: string
  isTest: boolean
  /** The blocked verification it told of (its row's id in the log); null for surge events, test sends and dropped counts. */
  verificationId: string | null
  /**
   * For a resend (POST .../redeliver), the event it sent again: its first delivery's id, which the
   * resend carried as its body's id and webhook-id (migration 035); null for every other delivery.
   */
  redeliveryOf: string | null
  outcome: DeliveryOutcome
  statusCode: number | null
  latencyMs: number
  error: string | null
  /** When the delivery started. */
  createdAt: Date
}

interface DeliveryRow {
  id: string
  site_id: string
  event: WebhookEvent
  url: string
  is_test: boolean
  verification_id: string | null
  redelivery_of: string | null
  outcome: DeliveryOutcome
  status_code: number | null
  latency_ms: number
  error: string | null
  created_at: Date
}

export interface RetentionRule {
  /** Rows kept per site, newest first. */
  keep: number
  maxAgeDays: number
}

/** A page of a site's delivery log: its size, where it starts, and its filters. */
export interface DeliveryPage {
  limit: number
  after?: LogCursor
  outcome?: DeliveryOutcome
  event?: WebhookEvent
}

export const deliveryRetention: RetentionRule = { keep: 1000, maxAgeDays: 30 }

const columns = 'id, site_id, event, url, is_test, verification_id, redelivery_of, outcome, status_code, latency_ms, error, created_at'

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    siteId: row.site_id,
    event: row.event,
    url: row.url,
    isTest: row.is_test,
    verificationId: row.verification_id,
    redeliveryOf: row.redelivery_of,
    outcome: row.outcome,
    statusCode: row.status_code,
    latencyMs: row.latency_ms,
    error: row.error,
    createdAt: row.created_at,
  }
}

/** The webhook delivery log. Plain SQL that runs alike on PostgreSQL and PGlite. */
export function createWebhookDeliveryRepository(database: SqlExecutor) {
  return {
    async record(delivery: WebhookDelivery): Promise<void> {
      await database.query(
        `INSERT INTO webhook_deliveries (${columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [
          delivery.id,
          delivery.siteId,
          delivery.event,
          delivery.url,
          delivery.isTest,
          delivery.verificationId,
          delivery.redeliveryOf,
          delivery.outcome,
          delivery.statusCode,
          delivery.latencyMs,
          delivery.error,
          delivery.createdAt,
        ],
      )
    },

    async findById(id: string): Promise<WebhookDelivery | undefined> {
      const rows = await database.query<DeliveryRow>(`SELECT ${columns} FROM webhook_deliveries WHERE id = $1`, [id])
      return rows[0] === undefined ? undefined : toDelivery(rows[0])
    },

    /**
     * The site's delivery `id`, while it is listed (a row past the age limit is not, whether or
     * not a prune has deleted it yet); undefined for another site's.
     */
    async findListed(siteId: string, id: string, rule: RetentionRule = deliveryRetention): Promise<WebhookDelivery | undefined> {
      const rows = await database.query<DeliveryRow>(
        `SELECT ${columns} FROM webhook_deliveries WHERE id = $1 AND site_id = $2 AND created_at >= now() - make_interval(days => $3::int)`,
        [id, siteId, rule.maxAgeDays],
      )
      return rows[0] === undefined ? undefined : toDelivery(rows[0])
    },

    /** The site's deliveries, newest first. */
    async listRecent(siteId: string, limit: number): Promise<WebhookDelivery[]> {
      return (await this.listPage(siteId, { limit })).map((entry) => entry.delivery)
    },

    /**
     * A page of the site's deliveries, newest first, after `page.after` (keyset.ts), of one
     * outcome or event kind when the page names them, each with the position a next page starts
     * after. Rows past the age limit are not listed, whether or not a prune has deleted them yet.
     * The filters are read on the (site_id, created_at, id) index's rows: a site keeps 1000 at most.
     */
    async listPage(siteId: string, page: DeliveryPage, rule: RetentionRule = deliveryRetention): Promise<{ delivery: WebhookDelivery; position: LogCursor }[]> {
      const { sql, params } = newestFirstPage(
        `SELECT ${columns}, ${CREATED_AT_MICROS} FROM webhook_deliveries`,
        [
          where('site_id = ?', siteId),
          where('created_at >= now() - make_interval(days => ?::int)', rule.maxAgeDays),
          page.outcome === undefined ? undefined : where('outcome = ?', page.outcome),
          page.event === undefined ? undefined : where('event = ?', page.event),
        ],
        { after: page.after, limit: page.limit },
      )
      const rows = await database.query<DeliveryRow & { created_at_micros: number }>(sql, params)
      return rows.map((row) => ({ delivery: toDelivery(row), position: { createdAtMicros: row.created_at_micros, id: row.id } }))
    },

    /** Deletes the site's rows beyond the newest `keep` or older than `maxAgeDays`; returns how many. */
    async prune(siteId: string, rule: RetentionRule = deliveryRetention): Promise<number> {
      const rows = await database.query<{ id: string }>(
        `DELETE FROM webhook_deliveries WHERE site_id = $1 AND (
           created_at < now() - make_interval(days => $2::int)
           OR id IN (
             SELECT id FROM webhook_deliveries WHERE site_id = $1
             ORDER BY created_at DESC, id DESC OFFSET $3
           )
         ) RETURNING id`,
        [siteId, rule.maxAgeDays, rule.keep],
      )
      return rows.length
    },

    /** Deletes every site's rows older than `maxAgeDays`, sites that record nothing any more included; returns how many. */
    async pruneExpired(rule: RetentionRule = deliveryRetention): Promise<number> {
      const rows = await database.query<{ count: number }>(
        `WITH gone AS (DELETE FROM webhook_deliveries WHERE created_at < now() - make_interval(days => $1::int) RETURNING 1)
         SELECT count(*)::int AS count FROM gone`,
        [rule.maxAgeDays],
      )
      return rows[0]?.count ?? 0
    },
  }
}

export type WebhookDeliveryRepository = ReturnType<typeof createWebhookDeliveryRepository>

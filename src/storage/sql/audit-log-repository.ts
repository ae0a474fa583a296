import { randomUUID } from 'node:crypto'
import { MAX_REPEATED_ADDRESSES, MAX_REPEATED_VARIANTS } from '../../domain/audit/audit-actions.js'
import type { AuditAction, AuditActor, AuditActorType, NewAuditEvent } from '../../domain/audit/audit-event.js'
import type { SqlExecutor } from '../ports.js'
import { CREATED_AT_MICROS, newestFirstPage, where, type PagePosition } from './keyset.js'

export interface AuditEventRecord {
  id: string
  createdAt: Date
  createdAtMicros: number
  action: AuditAction
  /** As stored: accountId and email null where the event has none. */
  actor: Required<AuditActor>
  site: { id: string; name: string } | null
  details: Record<string, unknown>
}

interface AuditEventRow {
  id: string
  created_at: Date
  created_at_micros: number
  action: AuditAction
  actor_type: AuditActorType
  actor_id: string | null
  actor_name: string | null
  actor_key_prefix: string | null
  actor_account_id: string | null
  actor_email: string | null
  client_ip: string | null
  user_agent: string | null
  site_id: string | null
  site_name: string | null
  details: Record<string, unknown>
}

export interface AuditPageQuery extends PagePosition {
  siteId?: string
  /** Only the events of these sites (an API key made for some sites only); undefined: every event. */
  siteIds?: readonly string[] | undefined
  action?: AuditAction
}

/** As a session keeps the User-Agent of its log-in: enough to tell browsers apart, bounded. */
const MAX_USER_AGENT_LENGTH = 512

/** The columns $2-$13 of an insert: the account, the action, the actor and the site. */
function columnsOf(event: NewAuditEvent): unknown[] {
  const { actor } = event
  return [
    event.accountId,
    event.action,
    actor.type,
    actor.id,
    actor.name,
    actor.keyPrefix,
    actor.clientIp,
    actor.userAgent?.slice(0, MAX_USER_AGENT_LENGTH) ?? null,
    event.site?.id ?? null,
    event.site?.name ?? null,
    actor.accountId ?? null,
    actor.email ?? null,
  ]
}

function toRecord(row: AuditEventRow): AuditEventRecord {
  return {
    id: row.id,
    createdAt: row.created_at,
    createdAtMicros: row.created_at_micros,
    action: row.action,
    actor: {
      type: row.actor_type,
      id: row.actor_id,
      name: row.actor_name,
      keyPrefix: row.actor_key_prefix,
      clientIp: row.client_ip,
      userAgent: row.user_agent,
      accountId: row.actor_account_id,
      email: row.actor_email,
    },
    site: row.site_id === null ? null : { id: row.site_id, name: row.site_name ?? '' },
    details: typeof row.details.firstAt === 'string' ? { ...row.details, firstAt: isoTimeOf(row.details.firstAt) } : row.details,
  }
}

/**
 * The time now as every other time of the API is written, ISO 8601 in UTC with milliseconds,
 * whatever the session's TimeZone: a timestamptz put in JSON as it is comes out in that zone, with
 * microseconds ("2026-12-01T06:15:14.582463+05:30").
 */
const FIRST_AT_NOW = `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/**
 * The distinct details an hour's event of repeated attempts has counted: its `variants`, or, for
 * an event written before they were kept, its own details (the first attempt's).
 */
const KNOWN_VARIANTS = `COALESCE(audit_events.details->'variants', jsonb_build_array(audit_events.details - ARRAY['count', 'firstAt', 'addresses']))`

/** A firstAt written before FIRST_AT_NOW (a timestamptz in the session's zone, with microseconds), as FIRST_AT_NOW writes it. */
function isoTimeOf(text: string): string {
  const time = new Date(text)
  return Number.isNaN(time.getTime()) ? text : time.toISOString()
}

/**
 * The accounts' audit log (migration 024). `record` takes the executor of the change's own
 * transaction, so the event commits or rolls back with the change; reads run on the
 * (account_id, [site_id,] created_at, id) indexes, newest first, a page at a time.
 */
export function createAuditLogRepository(database: SqlExecutor) {
  return {
    /**
     * Records the event. Its time is the insert's (clock_timestamp), not its transaction's start:
     * an event that commits after others were read must not sort before them, where a reader
     * polling the newest events would never see it.
     */
    async record(event: NewAuditEvent): Promise<void> {
      await database.query(
        `INSERT INTO audit_events (id, created_at, account_id, action, actor_type, actor_id, actor_name, actor_key_prefix, client_ip, user_agent, site_id, site_name,
                                   actor_account_id, actor_email, details)
         VALUES ($1, clock_timestamp(), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb)`,
        [randomUUID(), ...columnsOf(event), JSON.stringify(event.details ?? {})],
      )
    },

    /**
     * Records an attempt that strangers can repeat at will (a wrong password), as one event per
     * account, action and UTC hour: `details.count` attempts, the first at `details.firstAt`, from
     * `details.addresses` (the first MAX_REPEATED_ADDRESSES distinct ones); the event's own time,
     * address and browser are the latest attempt's, so it moves to the top of the log. An event
     * with details of its own (a refused passkey's reason) keeps the first attempt's at the top and
     * lists every distinct one in `details.variants` (the first MAX_REPEATED_VARIANTS), so a later
     * attempt neither hides an earlier one (a copied authenticator's counter behind junk
     * signatures anyone can send) nor is hidden by it. Whoever
     * knows an address can make such attempts from many machines, and one row each would let them
     * fill the account's log (and an embedded database's disk) with their noise.
     *
     * The hour's event is the one row whose repeated_hour is `hourStart` (a unique index,
     * migration 031): the hour's first attempts, written at once, insert one row and count in it,
     * whereas looking for the row first let each of them find none and insert its own.
     */
    async recordRepeated(event: NewAuditEvent, hourStart: Date): Promise<void> {
      const { actor } = event
      const address = actor.clientIp ?? ''
      const details = JSON.stringify(event.details ?? {})
      await database.query(
        `INSERT INTO audit_events (id, created_at, account_id, action, actor_type, actor_id, actor_name, actor_key_prefix, client_ip, user_agent, site_id, site_name,
                                   actor_account_id, actor_email, details, repeated_hour)
         SELECT $1, clock_timestamp(), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
                $14::jsonb || jsonb_build_object('count', 1, 'firstAt', ${FIRST_AT_NOW}, 'addresses', jsonb_build_array($16::text))
                           || CASE WHEN $14::jsonb = '{}' THEN '{}' ELSE jsonb_build_object('variants', jsonb_build_array($14::jsonb)) END, $15
          -- Not for an account deleted meanwhile (the event would go with it): nothing to record, not an error.
          WHERE EXISTS (SELECT 1 FROM accounts WHERE id = $2 FOR KEY SHARE)
         ON CONFLICT (account_id, action, repeated_hour) WHERE repeated_hour IS NOT NULL DO UPDATE SET
           created_at = EXCLUDED.created_at, actor_type = EXCLUDED.actor_type, actor_id = EXCLUDED.actor_id, actor_name = EXCLUDED.actor_name,
           actor_key_prefix = EXCLUDED.actor_key_prefix, client_ip = EXCLUDED.client_ip, user_agent = EXCLUDED.user_agent,
           actor_account_id = EXCLUDED.actor_account_id, actor_email = EXCLUDED.actor_email,
           details = audit_events.details || jsonb_build_object(
             'count', (audit_events.details->>'count')::int + 1,
             'addresses', CASE WHEN audit_events.details->'addresses' ? $16 OR jsonb_array_length(audit_events.details->'addresses') >= $17 THEN audit_events.details->'addresses'
                               ELSE audit_events.details->'addresses' || to_jsonb($16::text) END)
             || CASE WHEN $14::jsonb = '{}' THEN '{}'
                     WHEN jsonb_array_length(${KNOWN_VARIANTS}) >= $18 OR EXISTS (SELECT 1 FROM jsonb_array_elements(${KNOWN_VARIANTS}) AS known(variant) WHERE known.variant = $14::jsonb)
                       THEN jsonb_build_object('variants', ${KNOWN_VARIANTS})
                     ELSE jsonb_build_object('variants', ${KNOWN_VARIANTS} || jsonb_build_array($14::jsonb)) END`,
        [randomUUID(), ...columnsOf(event), details, hourStart, address, MAX_REPEATED_ADDRESSES, MAX_REPEATED_VARIANTS],
      )
    },

    /** The account's events, newest first, `query.limit` of them after `query.after`. */
    async listPage(accountId: string, query: AuditPageQuery): Promise<AuditEventRecord[]> {
      const { sql, params } = newestFirstPage(
        `SELECT id, created_at, ${CREATED_AT_MICROS}, action, actor_type, actor_id, actor_name, actor_key_prefix, actor_account_id, actor_email,
                client_ip, user_agent, site_id, site_name, details
           FROM audit_events`,
        [
          where('account_id = ?', accountId),
          query.siteId === undefined ? undefined : where('site_id = ?::uuid', query.siteId),
          // An API key's list: the events of these sites only (not the account's own, which name none).
          query.siteIds === undefined ? undefined : where('site_id = ANY(?::uuid[])', query.siteIds),
          query.action === undefined ? undefined : where('action = ?', query.action),
        ],
        query,
      )
      const rows = await database.query<AuditEventRow>(sql, params)
      return rows.map(toRecord)
    },

    /**
     * The sites the account's events are of, each as its newest event names it, and whether that
     * event is its deletion. A skip scan of audit_events_site_time (one index probe per site, then
     * the site's newest event): the cost grows with the sites, not with the events.
     */
    async sitesOf(accountId: string): Promise<{ id: string; name: string; deleted: boolean }[]> {
      const rows = await database.query<{ site_id: string; site_name: string | null; action: string }>(
        `WITH RECURSIVE logged(site_id) AS (
           (SELECT site_id FROM audit_events WHERE account_id = $1 AND site_id IS NOT NULL ORDER BY site_id LIMIT 1)
           UNION ALL
           SELECT (SELECT site_id FROM audit_events WHERE account_id = $1 AND site_id > logged.site_id ORDER BY site_id LIMIT 1)
             FROM logged WHERE logged.site_id IS NOT NULL
         )
         SELECT logged.site_id, newest.site_name, newest.action FROM logged
           CROSS JOIN LATERAL (
             SELECT site_name, action FROM audit_events WHERE account_id = $1 AND site_id = logged.site_id ORDER BY created_at DESC, id DESC LIMIT 1
           ) AS newest
          WHERE logged.site_id IS NOT NULL`,
        [accountId],
      )
      return rows.map((row) => ({ id: row.site_id, name: row.site_name ?? '', deleted: row.action === 'site.deleted' }))
    },

    /** Deletes up to `batchSize` events older than the cutoff, oldest first; how many it deleted. */
    async deleteBefore(cutoff: Date, batchSize: number): Promise<number> {
      const rows = await database.query<{ id: string }>(
        `DELETE FROM audit_events WHERE id IN (
           SELECT id FROM audit_events WHERE created_at < $1 ORDER BY created_at LIMIT $2
         ) RETURNING id`,
        [cutoff, batchSize],
      )
      return rows.length
    },
  }
}

export type AuditLogRepository = ReturnType<typeof createAuditLogRepository>

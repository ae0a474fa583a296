import { Counter, type Registry } from 'prom-client'
import type { SqlDatabase } from '../storage/ports.js'

/**
 * The business counters of /metrics. Unlike process metrics they persist across restarts and are
 * the fleet's: each instance adds its own increments to the stored totals every few seconds (and
 * at shutdown), then reads the totals back, so every instance shows what all of them counted,
 * the others' increments a flush or two late. Read one instance, or `max` across them; summing
 * instances counts everything once per instance. A counter never goes down between scrapes.
 */
const definitions = {
  challengesIssued: {
    name: 'tollgate_challenges_issued_total',
    help: 'Proof-of-work challenges issued.',
    labelNames: [],
  },
  challengesSurged: {
    name: 'tollgate_challenges_surged_total',
    help: 'Challenges issued harder because their site was over its surge threshold (surgeChallengesPerMinute), by the bits added.',
    labelNames: ['bits'],
  },
  surgeAlerts: {
    name: 'tollgate_surges_total',
    help: 'Surges of a site\'s challenge rate over its surge threshold, by kind: started, ended (each counted once for the fleet).',
    labelNames: ['kind'],
  },
  challengesRejected: {
    name: 'tollgate_challenges_rejected_total',
    help: 'Challenge requests refused, by error code (invalid_site_key, origin_not_allowed, rate_limited...).',
    labelNames: ['code'],
  },
  verifications: {
    name: 'tollgate_verifications_total',
    help: 'Accepted solution submissions by recommended action (allow, challenge, block), or test for the test site keys.',
    labelNames: ['action'],
  },
  verificationsRejected: {
    name: 'tollgate_verifications_rejected_total',
    help: 'Solution submissions refused before scoring, by error code.',
    labelNames: ['code'],
  },
  siteverify: {
    name: 'tollgate_siteverify_total',
    help: 'Siteverify calls by result (success, the first error code, or test for the documented test secrets).',
    labelNames: ['result'],
  },
  siteverifyRemoteipReported: {
    name: 'tollgate_siteverify_remoteip_mismatch_reported_total',
    help: "Tokens redeemed (counted as success too) with a remoteip outside the address that earned them, on sites whose tokenAddressCheck is report: what refuse would refuse.",
    labelNames: [],
  },
  feedback: {
    name: 'tollgate_feedback_total',
    help: "Label changes on verifications (a label set on a row that had none or the other; a repeat of the row's label is not counted), by label (legitimate, fraudulent) and source (siteverify: the site's backend with its secret; dashboard: an operator).",
    labelNames: ['label', 'source'],
  },
  gateChecks: {
    name: 'tollgate_gate_checks_total',
    help: "Requests of hosts behind the gate that a proxy asked about, by result: cleared (a valid clearance cookie), allowed_address (an address of the site's allowlist), blocked (an address or a country of the site's blocklist: the gate's page, or clearance_required), refused (the gate's page, or clearance_required), or the error code (invalid_site_key, validation_error, rate_limited, other).",
    labelNames: ['result'],
  },
  gateClearances: {
    name: 'tollgate_gate_clearances_total',
    help: 'Tokens traded for the gate\'s clearance cookie, by result: issued, or the error code (token_invalid, token_spent, invalid_site_key, validation_error, rate_limited, other).',
    labelNames: ['result'],
  },
  webhookDeliveries: {
    name: 'tollgate_webhook_deliveries_total',
    help: 'Webhook deliveries by outcome (delivered, failed, timeout, refused, dropped).',
    labelNames: ['outcome'],
  },
  verificationLogDropped: {
    name: 'tollgate_verification_log_dropped_rows_total',
    help: 'Verification log rows lost before they were written, by reason: buffer_full (the database was away longer than the buffer holds) or refused (the database refused the row).',
    labelNames: ['reason'],
  },
  verificationLogPurged: {
    name: 'tollgate_verification_log_purged_rows_total',
    help: 'Verification log rows deleted because they were older than LOG_RETENTION_DAYS or their site was deleted.',
    labelNames: [],
  },
} as const

export type CounterName = keyof typeof definitions
type LabelsOf<Name extends CounterName> = Record<(typeof definitions)[Name]['labelNames'][number], string>

export interface BusinessCounters {
  increment<Name extends CounterName>(name: Name, labels: LabelsOf<Name>, by?: number): void
  /** Loads the stored totals into the counters (once, at start). */
  load(): Promise<void>
  /**
   * Adds the increments since the last flush to the stored totals, then catches up with the
   * others' (read back; not with readBack false, as at shutdown, where nobody reads them).
   */
  flush(options?: { readBack?: boolean }): Promise<void>
  /** How many increments (metric and label set) wait to be stored. */
  countUnwritten(): number
  /** How many are in a write that has not answered yet. */
  countInFlight(): number
}

/** Adds `delta` to the total of a metric and label set. */
function add(totals: Map<string, Map<string, number>>, name: string, labels: string, delta: number): void {
  let byLabels = totals.get(name)
  if (byLabels === undefined) {
    byLabels = new Map()
    totals.set(name, byLabels)
  }
  byLabels.set(labels, (byLabels.get(labels) ?? 0) + delta)
}

/**
 * Labels are stored as a canonical `key=value,key=value` string: part of the primary key. Every
 * challenge and verification counts with no label or one, which skip the sort.
 */
function encodeLabels(labels: Record<string, string>): string {
  const keys = Object.keys(labels)
  if (keys.length === 0) return ''
  if (keys.length === 1) return `${keys[0]}=${labels[keys[0]!]}`
  return keys
    .sort()
    .map((key) => `${key}=${labels[key]}`)
    .join(',')
}

function decodeLabels(encoded: string): Record<string, string> {
  if (encoded === '') return {}
  return Object.fromEntries(encoded.split(',').map((pair) => pair.split('=', 2) as [string, string]))
}

export function createBusinessCounters(registry: Registry, database: SqlDatabase): BusinessCounters {
  const counters = new Map<string, Counter>()
  for (const definition of Object.values(definitions)) {
    counters.set(definition.name, new Counter({ ...definition, labelNames: [...definition.labelNames], registers: [registry] }))
  }
  // Increments not yet stored, keyed by metric name then encoded labels.
  let pending = new Map<string, Map<string, number>>()
  // What each counter shows now, keyed the same way: the stored total when last read, plus increments since.
  const shown = new Map<string, Map<string, number>>()
  let flushing: Promise<void> = Promise.resolve()
  let inFlight = 0

  const counterFor = (metricName: string): Counter => {
    const counter = counters.get(metricName)
    if (counter === undefined) throw new Error(`unknown counter ${metricName}`)
    return counter
  }

  async function writePending(): Promise<void> {
    const batch = pending
    pending = new Map()
    const rows: [string, string, number][] = []
    for (const [name, byLabels] of batch) for (const [labels, delta] of byLabels) rows.push([name, labels, delta])
    if (rows.length === 0) return
    inFlight = rows.length
    try {
      await database.query(
        `INSERT INTO metric_counters (name, labels, value)
         SELECT * FROM unnest($1::text[], $2::text[], $3::double precision[])
         ON CONFLICT (name, labels) DO UPDATE
           SET value = metric_counters.value + excluded.value, updated_at = now()`,
        [rows.map((row) => row[0]), rows.map((row) => row[1]), rows.map((row) => row[2])],
      )
    } catch (error) {
      // Keep the increments for the next flush rather than losing them.
      for (const [name, labels, delta] of rows) add(pending, name, labels, delta)
      throw error
    } finally {
      inFlight = 0
    }
  }

  /**
   * Raises every counter to the stored total plus this instance's increments not stored yet (the
   * other instances' flushed increments come in with it); never lowers one, so a scrape never
   * sees a counter reset that did not happen (a total deleted by hand, or read mid-way).
   */
  async function catchUp(): Promise<void> {
    const rows = await database.query<{ name: string; labels: string; value: number }>('SELECT name, labels, value FROM metric_counters')
    for (const row of rows) {
      const counter = counters.get(row.name)
      if (counter === undefined) continue
      const total = row.value + (pending.get(row.name)?.get(row.labels) ?? 0)
      const behind = total - (shown.get(row.name)?.get(row.labels) ?? 0)
      if (behind <= 0) continue
      counter.inc(decodeLabels(row.labels), behind)
      add(shown, row.name, row.labels, behind)
    }
  }

  return {
    increment(name, labels, by = 1) {
      const metricName = definitions[name].name
      counterFor(metricName).inc(labels, by)
      const encoded = encodeLabels(labels)
      add(pending, metricName, encoded, by)
      add(shown, metricName, encoded, by)
    },
    load: catchUp,
    flush(options = {}) {
      // Flushes run one after another so that a slow one never overlaps the next, and the read
      // back follows this instance's write: its own increments are then either stored or pending.
      flushing = flushing.catch(() => {}).then(async () => {
        await writePending()
        // Reading back is for the display only: once the write is in, the flush has done its
        // work, and the next flush reads again (none at shutdown).
        if (options.readBack !== false) await catchUp().catch(() => {})
      })
      return flushing
    },
    countUnwritten() {
      let count = 0
      for (const byLabels of pending.values()) count += byLabels.size
      return count
    },
    countInFlight: () => inFlight,
  }
}

import { randomUUID } from 'node:crypto'
import type { SqlExecutor } from '../../src/storage/ports.js'

export interface VerificationRow {
  id?: string
  siteId: string
  createdAt: Date
  action: 'allow' | 'challenge' | 'block' | 'rejected'
  riskScore?: number | null
  anomalies?: string[]
  countryCode?: string | null
  hostname?: string | null
  errorCode?: string | null
}

/**
 * Writes rows into the verification log as the verification flow would, in one statement
 * (unnest of parallel arrays), so tests can fill it with thousands of rows quickly.
 */
export async function insertVerifications(database: SqlExecutor, rows: readonly VerificationRow[]): Promise<string[]> {
  const ids = rows.map((row) => row.id ?? randomUUID())
  for (let start = 0; start < rows.length; start += 10_000) {
    const chunk = rows.slice(start, start + 10_000)
    await database.query(
      `INSERT INTO verifications (id, site_id, created_at, action, risk_score, anomalies, country_code, error_code, hostname)
       SELECT id, site_id, created_at, action, risk_score, string_to_array(anomalies, ','), country_code, error_code, hostname
         FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[], $5::smallint[], $6::text[], $7::text[], $8::text[], $9::text[])
           AS input(id, site_id, created_at, action, risk_score, anomalies, country_code, error_code, hostname)`,
      [
        ids.slice(start, start + 10_000),
        chunk.map((row) => row.siteId),
        chunk.map((row) => row.createdAt.toISOString()),
        chunk.map((row) => row.action),
        chunk.map((row) => (row.riskScore === undefined ? (row.action === 'rejected' ? null : 10) : row.riskScore)),
        chunk.map((row) => (row.anomalies ?? []).join(',')),
        chunk.map((row) => row.countryCode ?? null),
        chunk.map((row) => row.errorCode ?? (row.action === 'rejected' ? 'solution_invalid' : null)),
        chunk.map((row) => row.hostname ?? null),
      ],
    )
  }
  return ids
}

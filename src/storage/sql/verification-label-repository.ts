import type { NewVerificationLabel } from '../../domain/feedback/verification-label.js'
import type { SqlExecutor } from '../ports.js'

/** A scored verification a label can be put on, and what the risk model needs of it. */
export interface LabelTarget {
  /** The row's id (the dashboard names rows by it). */
  id: string
  /** Siteverify's metadata.verification_id: the challenge the token came from. */
  verificationId: string
  clientIp: string | null
}

/** How a label's verification is named: by the challenge (Siteverify, feedback) or by the row (the dashboard). */
export type LabelTargetName = { verificationId: string } | { rowId: string }

/** One scored, labeled verification, for the stats' feedback figures. */
export interface LabeledScore {
  riskScore: number
  label: 'legitimate' | 'fraudulent'
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Labels of the verification log (migration 028). Only scored rows take one: a rejected
 * submission was never a verification anyone could have let in. Every query starts with the site,
 * so another site's row is as absent as an unknown one; the challenge is found through the
 * partial index verifications_site_challenge, a site's labels through verifications_site_labeled.
 */
export function createVerificationLabelRepository(database: SqlExecutor) {
  return {
    async findTarget(siteId: string, name: LabelTargetName): Promise<LabelTarget | undefined> {
      const [column, value] = 'rowId' in name ? ['id', name.rowId] : ['challenge_id', name.verificationId]
      // A malformed id names nothing; cast as uuid it would be a database error.
      if (!UUID.test(value)) return undefined
      const rows = await database.query<{ id: string; challenge_id: string; client_ip: string | null }>(
        `SELECT id, challenge_id, client_ip FROM verifications
          WHERE site_id = $1 AND ${column} = $2::uuid AND challenge_id IS NOT NULL AND action <> 'rejected'
          LIMIT 1`,
        [siteId, value],
      )
      const row = rows[0]
      return row === undefined ? undefined : { id: row.id, verificationId: row.challenge_id, clientIp: row.client_ip }
    },

    /** Sets the row's label, replacing any it had (the last one wins); false when the row is gone. */
    async setLabel(siteId: string, rowId: string, label: NewVerificationLabel, now: Date): Promise<boolean> {
      const rows = await database.query(
        `UPDATE verifications SET label = $3, label_reason = $4, label_note = $5, labeled_at = $6, label_source = $7
          WHERE site_id = $1 AND id = $2 RETURNING 1`,
        [siteId, rowId, label.label, label.reason, label.note, now, label.source],
      )
      return rows.length > 0
    },

    /** Removes the row's label; false when it had none (or is gone). */
    async clearLabel(siteId: string, rowId: string): Promise<boolean> {
      const rows = await database.query(
        `UPDATE verifications SET label = NULL, label_reason = NULL, label_note = NULL, labeled_at = NULL, label_source = NULL
          WHERE site_id = $1 AND id = $2 AND label IS NOT NULL RETURNING 1`,
        [siteId, rowId],
      )
      return rows.length > 0
    },

    /**
     * The scores and labels of the site's labeled verifications created within the range: read
     * through the partial index of labeled rows, whose size is the labels', not the log's.
     */
    async listLabeledScores(siteId: string, from: Date, to: Date): Promise<LabeledScore[]> {
      const rows = await database.query<{ risk_score: number; label: LabeledScore['label'] }>(
        `SELECT risk_score, label FROM verifications
          WHERE site_id = $1 AND label IS NOT NULL AND risk_score IS NOT NULL AND created_at >= $2 AND created_at < $3`,
        [siteId, from, to],
      )
      return rows.map((row) => ({ riskScore: row.risk_score, label: row.label }))
    },
  }
}

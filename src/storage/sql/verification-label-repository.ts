import { isVerificationId, type NewVerificationLabel, type VerificationLabel } from '../../domain/feedback/verification-label.js'
import type { SqlExecutor } from '../ports.js'

/** A scored verification a label can be put on, and what the risk model needs of it. */
export interface LabelTarget {
  /** The row's id (the dashboard names rows by it). */
  id: string
  /** Siteverify's metadata.verification_id: the challenge the token came from. */
  verificationId: string
  clientIp: string | null
}

/** What a label replaced on its row: the one it had, or null. */
export interface LabelChange {
  previous: VerificationLabel | null
}

/** How a label's verification is named: by the challenge (Siteverify, feedback) or by the row (the dashboard). */
export type LabelTargetName = { verificationId: string } | { rowId: string }

/** One scored, labeled verification, for the stats' feedback figures: what was logged of it, and its label. */
export interface LabeledScore {
  riskScore: number
  /** The action logged: what the verification answered then, whatever the thresholds are now. */
  action: 'allow' | 'challenge' | 'block'
  anomalies: string[]
  label: VerificationLabel
}

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
      if (!isVerificationId(value)) return undefined
      const rows = await database.query<{ id: string; challenge_id: string; client_ip: string | null }>(
        `SELECT id, challenge_id, client_ip FROM verifications
          WHERE site_id = $1 AND ${column} = $2::uuid AND challenge_id IS NOT NULL AND action <> 'rejected'
          LIMIT 1`,
        [siteId, value],
      )
      const row = rows[0]
      return row === undefined ? undefined : { id: row.id, verificationId: row.challenge_id, clientIp: row.client_ip }
    },

    /**
     * Sets the row's label, replacing any it had (the last one wins): the label it had before
     * (null for none), or undefined when the row is gone. The row is locked before it is read, so
     * of two calls at once the second sees the first's label.
     */
    async setLabel(siteId: string, rowId: string, label: NewVerificationLabel, now: Date): Promise<LabelChange | undefined> {
      const rows = await database.query<{ previous: VerificationLabel | null }>(
        `WITH previous AS (SELECT id, feedback_label FROM verifications WHERE site_id = $1 AND id = $2 FOR UPDATE)
         UPDATE verifications SET feedback_label = $3, feedback_reason = $4, feedback_note = $5, feedback_at = $6, feedback_source = $7
           FROM previous WHERE verifications.site_id = $1 AND verifications.id = previous.id
         RETURNING previous.feedback_label AS previous`,
        [siteId, rowId, label.label, label.reason, label.note, now, label.source],
      )
      return rows[0] === undefined ? undefined : { previous: rows[0].previous }
    },

    /** Removes the row's label; false when it had none (or is gone). */
    async clearLabel(siteId: string, rowId: string): Promise<boolean> {
      const rows = await database.query(
        `UPDATE verifications SET feedback_label = NULL, feedback_reason = NULL, feedback_note = NULL, feedback_at = NULL, feedback_source = NULL
          WHERE site_id = $1 AND id = $2 AND feedback_label IS NOT NULL RETURNING 1`,
        [siteId, rowId],
      )
      return rows.length > 0
    },

    /**
     * The scores and labels of the site's labeled verifications created within the range: read
     * through the partial index of labeled rows, whose size is the labels', not the log's.
     */
    async listLabeledScores(siteId: string, from: Date, to: Date): Promise<LabeledScore[]> {
      const rows = await database.query<{ risk_score: number; action: LabeledScore['action']; anomalies: string[]; feedback_label: VerificationLabel }>(
        `SELECT risk_score, action, anomalies, feedback_label FROM verifications
          WHERE site_id = $1 AND feedback_label IS NOT NULL AND risk_score IS NOT NULL AND created_at >= $2 AND created_at < $3`,
        [siteId, from, to],
      )
      return rows.map((row) => ({ riskScore: row.risk_score, action: row.action, anomalies: row.anomalies, label: row.feedback_label }))
    },
  }
}

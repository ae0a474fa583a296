import { isVerificationId, type NewVerificationLabel, type VerificationLabel } from '../../domain/feedback/verification-label.js'
import type { ListDecision } from '../../domain/sites/list-decision.js'
import type { SqlExecutor } from '../ports.js'
import { DECIDED_BY_SQL } from './decided-by.js'

/** A scored verification a label can be put on, and what the risk model needs of it. */
export interface LabelTarget {
  /** The row's id (the dashboard names rows by it). */
  id: string
  /** Siteverify's metadata.verification_id: the challenge the token came from. */
  verificationId: string
  clientIp: string | null
  /** When the verification was made (the row's created_at): a fraudulent label counts against its client only while recent. */
  createdAt: Date
}

/** What a label replaced on its row: the one it had, or null. */
export interface LabelChange {
  previous: VerificationLabel | null
}

/** How a label's verification is named: by the challenge (Siteverify, feedback) or by the row (the dashboard). */
export type LabelTargetName = { verificationId: string } | { rowId: string }

/**
 * Labeled verifications counted alike for the stats' feedback figures: those of one score bucket,
 * label, logged action and list that decided them.
 */
export interface LabeledScoreCount {
  /** The bucket's lowest score: 0, 10, ... 90 (90 holds 90 to 100), as scoreDistribution's. */
  bucketMin: number
  /** The action logged: what the verification answered then, whatever the thresholds are now. */
  action: 'allow' | 'challenge' | 'block'
  /**
   * The site's list that decided it (migration 030), or null: the risk model did. A row logged
   * before 030 is the blocklist's by its anomalies (address_blocked, country_blocked).
   */
  decidedBy: ListDecision | null
  label: VerificationLabel
  count: number
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
      const rows = await database.query<{ id: string; challenge_id: string; client_ip: string | null; created_at: Date }>(
        `SELECT id, challenge_id, client_ip, created_at FROM verifications
          WHERE site_id = $1 AND ${column} = $2::uuid AND challenge_id IS NOT NULL AND action <> 'rejected'
          LIMIT 1`,
        [siteId, value],
      )
      const row = rows[0]
      return row === undefined ? undefined : { id: row.id, verificationId: row.challenge_id, clientIp: row.client_ip, createdAt: new Date(row.created_at) }
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
     * The site's labeled verifications created within the range, counted by score bucket, label,
     * action and the list that decided them: a few dozen rows whatever the labels' number. Read through the
     * partial index of labeled rows (site_id, created_at), whose size is the labels', not the log's.
     */
    async countLabeledScores(siteId: string, from: Date, to: Date): Promise<LabeledScoreCount[]> {
      const rows = await database.query<{ bucket_min: number; action: LabeledScoreCount['action']; decided_by: ListDecision | null; feedback_label: VerificationLabel; count: number }>(
        `SELECT (least(greatest(risk_score, 0), 99) / 10) * 10 AS bucket_min, action,
                ${DECIDED_BY_SQL} AS decided_by,
                feedback_label, count(*)::int4 AS count
           FROM verifications
          WHERE site_id = $1 AND feedback_label IS NOT NULL AND created_at >= $2 AND created_at < $3 AND risk_score IS NOT NULL
          GROUP BY 1, 2, 3, 4`,
        [siteId, from, to],
      )
      return rows.map((row) => ({ bucketMin: row.bucket_min, action: row.action, decidedBy: row.decided_by, label: row.feedback_label, count: row.count }))
    },
  }
}

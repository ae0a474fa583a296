/**
 * What a site learns later about a verification, and tells Tollgate (reCAPTCHA Enterprise's
 * annotateAssessment): the visitor was legitimate or fraudulent. Operators compare the labels with
 * their thresholds (the site's stats), and a fraudulent label counts against the verification's
 * client (src/domain/history/client-history.ts, recordFraudulentLabel).
 */
export const VERIFICATION_LABELS = ['legitimate', 'fraudulent'] as const
export type VerificationLabel = (typeof VERIFICATION_LABELS)[number]

/**
 * Why, from a fixed list modelled on reCAPTCHA's reasons, so that stats and exports can group by
 * it; anything else goes in the note, as `other`.
 */
export const LABEL_REASONS = [
  'chargeback',
  'chargeback_fraud',
  'payment_heuristics',
  'initiated_two_factor',
  'passed_two_factor',
  'failed_two_factor',
  'correct_password',
  'incorrect_password',
  'social_spam',
  'account_takeover',
  'other',
] as const
export type LabelReason = (typeof LABEL_REASONS)[number]

/** Who set a label: the site's backend with its secret, or an operator in the dashboard. */
export type LabelSource = 'siteverify' | 'dashboard'

/** The longest note a label keeps: a hint for the operator, not a place for personal data. */
export const LABEL_NOTE_MAX_LENGTH = 200

export interface NewVerificationLabel {
  label: VerificationLabel
  reason: LabelReason | null
  note: string | null
  source: LabelSource
}

export function isVerificationLabel(value: string): value is VerificationLabel {
  return (VERIFICATION_LABELS as readonly string[]).includes(value)
}

export function isLabelReason(value: string): value is LabelReason {
  return (LABEL_REASONS as readonly string[]).includes(value)
}

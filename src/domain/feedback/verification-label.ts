import { findUnstorableText } from '../storable-text.js'

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

/**
 * The reasons that go with each label: a chargeback or a failed second factor says fraud, a
 * passed one says a person; starting a second factor says neither, and `other` goes with both.
 * A pair outside these (legitimate because of a chargeback) is refused: the stats group by reason,
 * and a contradiction there is a mistake of the caller's.
 */
export const REASONS_BY_LABEL: Record<VerificationLabel, readonly LabelReason[]> = {
  legitimate: ['initiated_two_factor', 'passed_two_factor', 'correct_password', 'other'],
  fraudulent: [
    'chargeback',
    'chargeback_fraud',
    'payment_heuristics',
    'initiated_two_factor',
    'failed_two_factor',
    'incorrect_password',
    'social_spam',
    'account_takeover',
    'other',
  ],
}

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

/** What is wrong with giving the label this reason, as a sentence for the error, or undefined when they go together. */
export function findReasonProblem(label: VerificationLabel, reason: LabelReason): string | undefined {
  if (REASONS_BY_LABEL[label].includes(reason)) return undefined
  return `The reason ${reason} does not go with the label ${label}; its reasons are ${REASONS_BY_LABEL[label].join(', ')}.`
}

const VERIFICATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether the value has the form of a verification's id (a UUID, as Siteverify's metadata.verification_id). */
export function isVerificationId(value: string): boolean {
  return VERIFICATION_ID.test(value)
}

/**
 * Control characters but the tab (ESC, CR, LF, NUL...), and the bidirectional overrides and
 * isolates (LRE to RLO, LRI to PDI): an operator reads the note in the dashboard, in an export and
 * in a terminal, where these would rewrite or reorder what is shown around it.
 */
const UNDISPLAYABLE = /[^\P{Cc}\t]|[\u202A-\u202E\u2066-\u2069]/u

/**
 * What is wrong with a label's note, as a sentence for the error, or undefined when it may be
 * kept: too long, text PostgreSQL would refuse or change (storable-text.ts), or characters that
 * would disguise what an operator reads. Every route that takes a note checks it with this.
 */
export function findLabelNoteProblem(note: string): string | undefined {
  if ([...note].length > LABEL_NOTE_MAX_LENGTH) return `The note is longer than ${LABEL_NOTE_MAX_LENGTH} characters.`
  if (findUnstorableText(note, '') !== undefined) return 'The note holds a NUL character or half of a surrogate pair, which cannot be stored.'
  if (UNDISPLAYABLE.test(note)) return 'The note holds a control character (only the tab is allowed) or a bidirectional override or isolate (U+202A to U+202E, U+2066 to U+2069).'
  return undefined
}

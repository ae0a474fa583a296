import type { LabelReason, LabelSource, VerificationLabel } from '../api/types.js'

export {
  isLabelReason,
  isVerificationId,
  isVerificationLabel,
  LABEL_NOTE_MAX_LENGTH,
  LABEL_REASONS,
  REASONS_BY_LABEL,
  VERIFICATION_LABELS,
} from '../../../src/domain/feedback/verification-label.js'

/** The labels as the log's badges and the label form name them. */
export const labelNames: Record<VerificationLabel, string> = { legitimate: 'Legitimate', fraudulent: 'Fraudulent' }

/** The API's reasons in words (the API's code stays in exports and in the API). */
export const reasonNames: Record<LabelReason, string> = {
  chargeback: 'Chargeback',
  chargeback_fraud: 'Chargeback (fraud)',
  payment_heuristics: 'Payment heuristics',
  initiated_two_factor: 'Started two-factor',
  passed_two_factor: 'Passed two-factor',
  failed_two_factor: 'Failed two-factor',
  correct_password: 'Correct password',
  incorrect_password: 'Incorrect password',
  social_spam: 'Spam',
  account_takeover: 'Account takeover',
  other: 'Other',
}

/** Who set a label: the site's backend through Siteverify feedback, or someone in the dashboard. */
export const sourceNames: Record<LabelSource, string> = { siteverify: 'from your server', dashboard: 'from the dashboard' }

/** The log's label filter: the API's `label` query ('none': rows without a label). */
export type LabelFilter = VerificationLabel | 'none'

export const labelFilters: readonly LabelFilter[] = ['legitimate', 'fraudulent', 'none']

export const labelFilterNames: Record<LabelFilter, string> = { ...labelNames, none: 'Unlabeled' }

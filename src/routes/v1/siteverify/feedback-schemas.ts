import { Type } from 'typebox'
import { LABEL_NOTE_MAX_LENGTH, LABEL_REASONS, VERIFICATION_LABELS } from '../../../domain/feedback/verification-label.js'
import { ErrorResponse } from '../dashboard-schemas.js'
import { nullable, stringEnum } from '../public-schemas.js'

/** The feedback call's error codes: Siteverify's own where they mean the same, and the feedback's. */
export const FEEDBACK_ERROR_CODES = [
  'missing-input-secret',
  'invalid-input-secret',
  'missing-input-response',
  'invalid-input-response',
  'invalid-input-verification-id',
  'missing-input-label',
  'invalid-input-label',
  'invalid-input-reason',
  'invalid-input-note',
  'not-found',
  'bad-request',
  'internal-error',
] as const

export type FeedbackErrorCode = (typeof FEEDBACK_ERROR_CODES)[number]

/**
 * Every field is text (or null, the field absent, as Siteverify takes them): the values are checked
 * by the handler, so that each wrong one gets its own error code rather than a schema's message.
 */
export const FeedbackBody = Type.Object(
  {
    secret: Type.Optional(nullable('string', { description: "The site's secret key (tgs_...), current or replaced within its grace period" })),
    response: Type.Optional(
      nullable('string', { description: 'The token Siteverify redeemed (or would have): its signature is checked, not its age nor whether it was redeemed' }),
    ),
    verification_id: Type.Optional(nullable('string', { description: "Instead of response: the metadata.verification_id Siteverify answered for the token" })),
    label: Type.Optional(nullable('string', { description: `What the visitor turned out to be: ${VERIFICATION_LABELS.join(' or ')}` })),
    reason: Type.Optional(nullable('string', { description: `Optional, why: ${LABEL_REASONS.join(', ')}` })),
    note: Type.Optional(
      nullable('string', {
        description: `Optional, up to ${LABEL_NOTE_MAX_LENGTH} characters for the operator (no personal data); no control characters but the tab, no bidirectional overrides or isolates`,
      }),
    ),
  },
  {
    description:
      'JSON or form-urlencoded (multipart is 415; fields in the query string are not read; an empty body is 400); response or verification_id names the verification, ' +
      'a verification_id that is not a UUID being 400 invalid-input-verification-id',
  },
)

export type FeedbackFields = Type.Static<typeof FeedbackBody>

export const FeedbackAccepted = Type.Object({
  success: Type.Literal(true),
  verification_id: Type.String({ format: 'uuid' }),
  label: stringEnum(VERIFICATION_LABELS),
})

/**
 * A refusal in both of the service's dialects: Siteverify's (success, error-codes), which a
 * backend's Siteverify client already reads, and the API's error body with its stable snake_case
 * code (DESIGN section 3): validation_error, unauthorized (a wrong secret), not_found.
 */
export const FeedbackRefused = Type.Object({
  success: Type.Literal(false),
  'error-codes': Type.Array(stringEnum(FEEDBACK_ERROR_CODES)),
  ...ErrorResponse.properties,
})

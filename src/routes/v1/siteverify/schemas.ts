import { Type } from 'typebox'
import { nullable, stringEnum } from '../public-schemas.js'

const errorCodes = [
  'missing-input-secret',
  'invalid-input-secret',
  'missing-input-response',
  'invalid-input-response',
  'timeout-or-duplicate',
  'bad-request',
  'internal-error',
] as const

/** Field names as Turnstile, reCAPTCHA and hCaptcha spell them. Unknown fields are ignored. */
export const SiteverifyBody = Type.Object({
  secret: Type.Optional(Type.String({ description: 'The site\'s secret key (tgs_...), or a documented test secret' })),
  response: Type.Optional(Type.String({ description: 'The token from /api/v1/verify' })),
  remoteip: Type.Optional(Type.String({ description: 'The visitor\'s IP address (accepted, not checked)' })),
  idempotency_key: Type.Optional(Type.String({ maxLength: 128, description: 'A retry with the same key gets the first answer' })),
  sitekey: Type.Optional(Type.String({ description: 'When sent, must be the site key the token was issued for' })),
})

export type SiteverifyFields = Type.Static<typeof SiteverifyBody>

export const SiteverifyResult = Type.Object({
  success: Type.Boolean(),
  challenge_ts: nullable('string', { format: 'date-time', description: 'When the token was issued' }),
  hostname: nullable('string', { description: 'The page\'s hostname (Origin or Referer)' }),
  'error-codes': Type.Array(stringEnum(errorCodes)),
  action: nullable('string', {
    description: "The page's action name when the page named one (the SDK's action option; Turnstile's and reCAPTCHA v3's meaning), else the recommended action (allow)",
  }),
  recommendedAction: nullable('string', { enum: ['allow', null], description: 'The recommended action when the token was issued (tokens are issued for allow); null when the redemption failed' }),
  cdata: nullable('string', { description: "The page's own data (the SDK's cData option, as Turnstile's), when it gave any" }),
  riskScore: nullable('integer', { minimum: 0, maximum: 100 }),
  score: nullable('number', { minimum: 0, maximum: 1, description: '(100 - riskScore) / 100' }),
  anomalies: Type.Array(Type.String()),
  countryCode: nullable('string'),
})

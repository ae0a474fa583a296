import { Type } from 'typebox'
import { NONCE_PATTERN } from '../../../domain/proof-of-work/nonce.js'
import { anomalyVocabulary } from '../../../domain/risk/anomalies.js'
import type { SignalValue } from '../../../domain/risk/scoring-input.js'
import { stringEnum } from '../public-schemas.js'

/**
 * Further keys of fingerprint and behaviorData: JSON primitives or short arrays of them, so that
 * the SDK can add signals without a server change while nobody can send deep structures. The
 * 16 KiB body limit bounds the whole.
 */
const FurtherSignal = Type.Unsafe<SignalValue>({
  type: ['string', 'number', 'boolean', 'null', 'array'],
  maxLength: 1024,
  maxItems: 32,
  items: { type: ['string', 'number', 'boolean', 'null'], maxLength: 256 },
})

const MAX_SIGNAL_KEYS = 64

/** A name for the page's purpose ('login', 'signup'), as Turnstile's and reCAPTCHA v3's widgets take it. */
export const PAGE_ACTION_PATTERN = '^[A-Za-z0-9_/-]{1,32}$'
/** Data of the page's own to carry through the token to Siteverify, as Turnstile's cData. */
export const CDATA_PATTERN = '^[A-Za-z0-9_-]{0,255}$'

export const SolutionSubmission = Type.Object({
  challengeId: Type.String({
    format: 'uuid',
    pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
    description: 'The challengeId of the challenge being solved',
  }),
  nonce: Type.String({
    pattern: NONCE_PATTERN,
    description:
      "Decimal, no leading zeros, below 2^53. The SDK's nonces have 16 digits (a 12-digit lane prefix from 100000000000, then a 4-digit suffix); " +
      `a nonce in any other layout is labelled foreign_solver (+${anomalyVocabulary.foreign_solver.weight}, docs/risk.md)`,
  }),
  solveTimeMs: Type.Integer({ minimum: 0, maximum: 86_400_000, description: 'Milliseconds the client spent solving' }),
  fingerprint: Type.Object(
    {
      canvas: Type.Optional(Type.String({ maxLength: 1024 })),
      webgl: Type.Optional(Type.String({ maxLength: 1024 })),
      patchedNatives: Type.Optional(Type.Integer({
        minimum: 0,
        maximum: 64,
        description: 'How many of the natives that stealth setups patch the page found replaced (docs/risk.md); ' +
          `more than 0 is labelled patched_natives (+${anomalyVocabulary.patched_natives.weight})`,
      })),
    },
    {
      additionalProperties: FurtherSignal,
      maxProperties: MAX_SIGNAL_KEYS,
      description:
        'Browser fingerprint signals. The risk model expects the keys the SDK sends (docs/risk.md); ' +
        `without them the submission is labelled incomplete_fingerprint (+${anomalyVocabulary.incomplete_fingerprint.weight})`,
    },
  ),
  behaviorData: Type.Object(
    {
      mouseMovements: Type.Optional(Type.Integer({ minimum: 0 })),
      keystrokes: Type.Optional(Type.Integer({ minimum: 0 })),
    },
    { additionalProperties: FurtherSignal, maxProperties: MAX_SIGNAL_KEYS, description: 'Behaviour signals' },
  ),
  pageAction: Type.Optional(
    Type.String({
      pattern: PAGE_ACTION_PATTERN,
      description: "Optional (beyond the spec): the page's action name ('login'), bound into the token; Siteverify answers it as action, as Turnstile and reCAPTCHA v3 do",
    }),
  ),
  cData: Type.Optional(
    Type.String({ pattern: CDATA_PATTERN, description: "Optional (beyond the spec): the page's own data, bound into the token; Siteverify answers it as cdata, as Turnstile does" }),
  ),
})

export const VerificationResult = Type.Object({
  success: Type.Boolean({ description: 'true only for allow, which carries a token' }),
  token: Type.Optional(Type.String({ description: 'For Siteverify; valid 300 s, redeemable once' })),
  riskScore: Type.Integer({ minimum: 0, maximum: 100, description: 'Higher is riskier' }),
  action: stringEnum(['allow', 'challenge', 'block'], {
    description: 'challenge: request a new (harder) challenge and submit again; block: give up',
  }),
  expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'Expiry of the token' })),
})

export type VerificationResultBody = Type.Static<typeof VerificationResult>

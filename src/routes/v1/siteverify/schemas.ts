import { Type } from 'typebox'
import { EPHEMERAL_ID_PATTERN } from '../../../domain/token/ephemeral-id-pattern.js'
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

/** The documented limit of an idempotency key (docs/core-flow.md, section 6). */
const IDEMPOTENCY_KEY_MAX_LENGTH = 128

const fieldDescriptions = {
  secret: 'The site\'s secret key (tgs_...), or a documented test secret',
  response: 'The token from /api/v1/verify',
  remoteip:
    "The visitor's IP address: compared with where the token was earned for a site that checks its tokens' addresses (its tokenAddressCheck: remoteipMatch, " +
    'and a refusal under refuse); otherwise accepted and not checked. Never stored',
  idempotency_key:
    "A retry of this token's successful redemption with the same key gets that answer again (until a minute past the token's expiry); failures are not stored, an empty key is no key",
  sitekey: 'When sent (not empty), must be the site key the token was issued for: another answers invalid-input-response and does not spend the token; test secrets ignore it',
}

/** Field names as Turnstile, reCAPTCHA and hCaptcha spell them. Unknown fields are ignored. */
export const SiteverifyQuery = Type.Object({
  secret: Type.Optional(Type.String({ description: fieldDescriptions.secret })),
  response: Type.Optional(Type.String({ description: fieldDescriptions.response })),
  remoteip: Type.Optional(Type.String({ description: fieldDescriptions.remoteip })),
  idempotency_key: Type.Optional(Type.String({ maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, description: fieldDescriptions.idempotency_key })),
  sitekey: Type.Optional(Type.String({ description: fieldDescriptions.sitekey })),
})

export type SiteverifyQueryFields = Type.Static<typeof SiteverifyQuery>

/**
 * The same fields in a body, where a JSON null is the field absent: typed clients send a field
 * they have no value for as null (Python's `Optional[str]`, JavaScript's `formData.get()` of a
 * token field the form lacked), where a form would not have sent it at all. Any other type is
 * refused (bad-request): nothing is converted.
 */
const bodyDescription = 'A field that is null in JSON counts as absent (missing-input-* for secret and response)'

export const SiteverifyBody = Type.Object(
  {
    secret: Type.Optional(nullable('string', { description: fieldDescriptions.secret })),
    response: Type.Optional(nullable('string', { description: fieldDescriptions.response })),
    remoteip: Type.Optional(nullable('string', { description: fieldDescriptions.remoteip })),
    idempotency_key: Type.Optional(nullable('string', { maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, description: fieldDescriptions.idempotency_key })),
    sitekey: Type.Optional(nullable('string', { description: fieldDescriptions.sitekey })),
  },
  { description: bodyDescription },
)

export type SiteverifyFields = Type.Static<typeof SiteverifyBody>

const solutionDescription =
  "Friendly Captcha v1's name for response (its siteverify is at this same path): read when response is absent, so that its backends only change host and secret"

/** /api/v1/siteverify's fields: SiteverifyQuery's, and Friendly Captcha v1's `solution` (an alias of response). */
export const OwnSiteverifyQuery = Type.Object({ ...SiteverifyQuery.properties, solution: Type.Optional(Type.String({ description: solutionDescription })) })

/** /api/v1/siteverify's body: SiteverifyBody's, and Friendly Captcha v1's `solution` (an alias of response). */
export const OwnSiteverifyBody = Type.Object(
  { ...SiteverifyBody.properties, solution: Type.Optional(nullable('string', { description: solutionDescription })) },
  { description: bodyDescription },
)

export const SiteverifyResult = Type.Object({
  success: Type.Boolean(),
  challenge_ts: nullable('string', { format: 'date-time', description: 'When the token was issued' }),
  hostname: nullable('string', {
    description:
      "The host of the page that asked for the token, lowercased: from its Origin, or its Referer when it sent no Origin, whatever the scheme (an app's capacitor://localhost is localhost). " +
      'Null when neither named a host: no header (a script, a native client), or Origin: null (a sandboxed frame, a file: page, an app page without an origin; docs/apps.md). Null too in a failure',
  }),
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
  remoteipMatch: nullable('boolean', {
    description:
      "Whether remoteip is in the address (IPv4) or /64 (IPv6) that earned the token, for a site whose tokenAddressCheck is report or refuse; " +
      'null without remoteip, for a token of a site that does not check (or issued before it did), when remoteip is of the other family (a dual-stack visitor), for test secrets, and in a failure',
  }),
  metadata: Type.Object(
    {
      ephemeral_id: nullable('string', {
        pattern: EPHEMERAL_ID_PATTERN,
        description:
          "The visitor's device on this site (Turnstile's ephemeral id): the same device gets the same id from any address until Monday 00:00 UTC, " +
          'and unrelated ids on other sites; null when the submission described no device, for test site keys and test secrets, ' +
          'with EPHEMERAL_IDS=false, and when the redemption failed',
      }),
      verification_id: Type.Optional(
        nullable('string', {
          format: 'uuid',
          description:
            "The verification's id, in a success only (null for test secrets): name it so to POST /api/v1/siteverify/feedback days later, or find its row in the dashboard's log (typed whole into the reference search; ?verificationId= in the log's API). " +
            "Tollgate's own addition to Turnstile's metadata; absent from a failure (the vendors' paths answer a failure without metadata at all)",
        }),
      ),
    },
    { description: "As Turnstile's metadata" },
  ),
})

const { success, 'error-codes': siteverifyErrorCodes, ...tokenFacts } = SiteverifyResult.properties

/**
 * reCAPTCHA's and hCaptcha's paths: a success as SiteverifyResult, a failure with success and
 * error-codes only, as Google and hCaptcha answer it, so that typed clients never meet a null there.
 */
export const VendorSiteverifyResult = Type.Object(
  {
    success,
    'error-codes': siteverifyErrorCodes,
    ...Type.Partial(Type.Object(tokenFacts)).properties,
  },
  { description: "A failure has only success and error-codes; a success has every field of /api/v1/siteverify's answer" },
)

/** Turnstile's path: VendorSiteverifyResult, with Cloudflare's empty messages list in a failure, and cdata "" in a success without the page's data. */
export const TurnstileSiteverifyResult = Type.Object(
  {
    ...VendorSiteverifyResult.properties,
    messages: Type.Optional(Type.Array(Type.String(), { maxItems: 0, description: 'In a failure: empty, as Turnstile answers it' })),
  },
  { description: "A failure has only success, error-codes and messages (empty); a success has every field of /api/v1/siteverify's answer, cdata \"\" without the page's data" },
)

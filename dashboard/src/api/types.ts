/** Shapes of the dashboard API (DESIGN section 3), as the UI reads them. */

import type { LabelReason, LabelSource, VerificationLabel } from '../../../src/domain/feedback/verification-label.js'
import type { ListDecision } from '../../../src/domain/sites/list-decision.js'

export type { LabelReason, LabelSource, ListDecision, VerificationLabel }

export interface Account {
  id: string
  email: string
  createdAt: string
}

/** The events a site's webhook can be sent (docs/webhooks.md). */
export type WebhookEvent = 'verification.blocked' | 'surge.started' | 'surge.ended'

export interface SiteSettings {
  /** null for a viewer, whatever is set: for Slack-style receivers the URL is a credential (webhookUrlSet says whether one is). */
  webhookUrl: string | null
  webhookUrlSet: boolean
  webhookSecretSet: boolean
  /** Until when the webhook secret the last new one replaced still signs beside it; null when none does. */
  previousWebhookSecretExpiresAt: string | null
  /** The events the webhook is sent, in the API's order. */
  webhookEvents: WebhookEvent[]
  difficulty: number
  challengeLifetimeSeconds: number
  challengeThreshold: number
  blockThreshold: number
  maxStepUps: number
  surgeChallengesPerMinute: number
  /** Addresses and ranges allowed at score 0 without being judged (normalized by the API). */
  allowedAddresses: string[]
  /** Addresses and ranges blocked at score 100 (normalized by the API); the allowlist wins. */
  blockedAddresses: string[]
  /** ISO 3166-1 alpha-2 codes blocked at score 100, uppercase and sorted by the API. */
  blockedCountries: string[]
  /** Where a visitor the gate turns away can ask for help (https or mailto:), linked from its denied page; null: none. */
  blockedHelpUrl: string | null
  /** Whether Siteverify compares the token's address with remoteip: says so (report), or refuses another (refuse). */
  tokenAddressCheck: TokenAddressCheck
  /** Whether the members (not the owner) reach the site only with two-factor authentication on; the owner's to change. */
  requireTwoFactor: boolean
}

export type TokenAddressCheck = 'off' | 'report' | 'refuse'

export interface Site {
  id: string
  name: string
  siteKey: string
  domains: string[]
  settings: SiteSettings
  /** Until when the secret key replaced by the last rotation still works; null when it does not. */
  previousSecretExpiresAt: string | null
  createdAt: string
  updatedAt: string
  /** The account's role on the site: its own (owner), or shared with it (admin: all but deleting it; viewer: reads only). */
  role: SiteRole
  /** The ETag the site was read with (from the answer's header, not its body), for If-Match. */
  etag?: string
}

/** A site of the sites list, with its last 24 hours (`include=summary`). */
export interface ListedSite extends Site {
  /** Its verifications and blocked ones since `from` (the UTC hour 23 hours before the current one). */
  summary?: { from: string; verifications: number; blocked: number }
}

/** Creating a site and rotating its secret are the only answers that carry the secret key. */
export interface SiteWithSecret extends Site {
  secretKey: string
}

export interface SecretRotation {
  secretKey: string
  previousSecretExpiresAt: string | null
}

/** What PUT /sites/{id} accepts: absent keys keep their value, null clears a setting. */
export interface SiteUpdate {
  name?: string
  domains?: string[]
  settings?: { [Key in Exclude<keyof SiteSettings, 'webhookSecretSet' | 'webhookUrlSet' | 'previousWebhookSecretExpiresAt'>]?: SiteSettings[Key] | null } & {
    webhookSecret?: string | null
    /** null stops the replaced webhook secret signing now. */
    previousWebhookSecretExpiresAt?: null
  }
}

/** What a key may do: anything the dashboard API allows a key, or only read (GET). */
export type ApiKeyAccess = 'full' | 'read'

export interface ApiKey {
  id: string
  name: string
  prefix: string
  access: ApiKeyAccess
  /** The only sites the key reaches (those the account still reaches of them); null for every site of the account. */
  siteIds: string[] | null
  /** The only addresses and ranges the key may be used from (canonical: 203.0.113.0/24); null for any address. */
  allowedAddresses: string[] | null
  /** When the key stops working (ISO 8601); null for never. An expired key stays listed until revoked. */
  expiresAt: string | null
  /** Whether the key has expired by the service's clock (the one that refuses it), when the list was read. */
  expired: boolean
  createdAt: string
  lastUsedAt?: string | null
}

export interface CreatedApiKey extends ApiKey {
  key: string
}

/** The account's two-factor authentication (GET /api/v1/me/two-factor). */
export interface Passkey {
  id: string
  name: string
  createdAt: string
  /** The last log-in with it; null: never. */
  lastUsedAt: string | null
}

export interface TwoFactorStatus {
  enabled: boolean
  /** When it was turned on (ISO 8601); null while it is off. */
  enabledAt: string | null
  /** The recovery codes not used yet. */
  recoveryCodesLeft: number
}

/** A setup begun (POST /api/v1/me/two-factor/setup): the key for the authenticator app, not yet in force. */
export interface TwoFactorSetup {
  /** The TOTP key in base32 (32 characters), for typing in by hand. */
  secret: string
  /** The same key with the account and the issuer, for the QR code. */
  otpauthUri: string
  /** Names this setup when it is confirmed; good for 15 minutes. */
  setupToken: string
}

/** A log-in session of the account (GET /api/v1/sessions). */
export interface Session {
  id: string
  current: boolean
  createdAt: string
  expiresAt: string
  lastSeenAt: string | null
  userAgent: string | null
  clientIp: string | null
}

/** `rejected`: refused before scoring (a wrong nonce, an expired challenge...); see `errorCode`. */
export type VerificationAction = 'allow' | 'challenge' | 'block' | 'rejected'

/**
 * The hostname or page action the stats count those under that come beyond a site's 100 distinct
 * ones of an hour (the server's OTHER_ROLLUP_VALUE, src/storage/sql/rollup-values.ts): no real one
 * can be spelt so.
 */
export const OTHER_VALUES = '<other>'

export const verificationActions: readonly VerificationAction[] = ['allow', 'challenge', 'block', 'rejected']

export interface Verification {
  /** The id of the verify request it records: its first 13 characters are the visitor's reference. */
  id: string
  siteId: string
  createdAt: string
  action: VerificationAction
  errorCode: string | null
  riskScore: number | null
  anomalies: string[]
  countryCode: string | null
  clientIp: string | null
  hostname: string | null
  /** The page's action ('login') a scored verification came with. */
  pageAction: string | null
  userAgent: string | null
  difficulty: number | null
  solveTimeMs: number | null
  /** The visitor's device on the site, as Siteverify answered it (metadata.ephemeral_id); null when the submission described none. */
  device: string | null
  /** Siteverify's metadata.verification_id of the row's token; null for rejected rows (which take no label). */
  verificationId: string | null
  /**
   * The site's list that decided the verdict instead of the risk model (Settings: allowed, blocked addresses or countries); null when the model did.
   * Absent from an instance older than migration 030 (during a rolling upgrade): read it with `== null`.
   */
  decidedBy?: ListDecision | null
  /** What the site's backend (Siteverify feedback) or an operator said the visitor was; null without a label. */
  label: VerificationLabel | null
  labelReason: LabelReason | null
  labelNote: string | null
  labeledAt: string | null
  labelSource: LabelSource | null
}

/** What PUT /sites/{id}/verifications/{row}/label sends: reason and note optional. */
export interface LabelChoice {
  label: VerificationLabel
  reason: LabelReason | null
  note: string | null
}

export interface VerificationPage {
  items: Verification[]
  nextCursor: string | null
}

/** A verification found by its reference among all the account's sites. */
export interface AccountVerification extends Verification {
  siteName: string
}

export interface AccountVerificationPage {
  items: AccountVerification[]
  nextCursor: string | null
}

export type ActionCounts = Record<VerificationAction, number>

/** One bucket of the series; the API sends every bucket of the range, zeros included. */
export interface StatsBucket extends ActionCounts {
  /** Start of the UTC hour or day, ISO 8601. */
  bucket: string
}

export interface Stats {
  from: string
  to: string
  interval: 'hour' | 'day'
  series: StatsBucket[]
  topAnomalies: { label: string; count: number }[]
  topCountries: { countryCode: string; count: number }[]
  /** The hosts of the pages verifications came from (none for a script that sent no Origin or Referer); OTHER_VALUES for those beyond an hour's 100. */
  topHostnames: { hostname: string; count: number }[]
  /** The page actions ('login', 'signup') scored verifications came with; OTHER_VALUES for those beyond an hour's 100. */
  topPageActions: { pageAction: string; count: number }[]
  /** All ten buckets of the risk score, lowest first; rejected submissions have no score. */
  scoreDistribution: ScoreBucket[]
  totals: ActionCounts & { total: number }
  /** The range's labeled verifications against the actions logged (what each was answered then, whatever the thresholds are now). */
  feedback: FeedbackFigures
  /** The site's tokens at Siteverify, counted per UTC hour (the hours the range overlaps). */
  siteverify: {
    /** The whole UTC hours counted (ISO 8601): the range's, widened to whole hours; the dashboard's ranges are whole hours already. */
    from: string
    to: string
    /** Tokens issued (allowed verifications) since countedSince, within the range. */
    issued: number
    redeemed: number
    /** Of redeemed, those sent with a remoteip outside the address that earned the token (the address check's report). */
    redeemedFromOtherAddress: number
    refused: { errorCode: string; count: number }[]
    /** When Tollgate began counting (ISO 8601). */
    countedSince: string
  }
}

export interface FeedbackFigures {
  legitimate: number
  fraudulent: number
  /** Fraudulent ones that were allowed (the action logged), the lists' aside. */
  missed: number
  /** Legitimate ones that were challenged or blocked (the action logged), the lists' aside. */
  falseAlarms: number
  /** The labeled ones a site's list decided instead of the risk model: never missed nor false alarms. Absent from an instance older than migration 030. */
  byList?: Record<ListDecision, { legitimate: number; fraudulent: number }>
  /** The labels by risk score, in the buckets of scoreDistribution; not those a site's list decided (their score is the list's). */
  buckets: { min: number; max: number; legitimate: number; fraudulent: number }[]
}

/** Scored verifications with min <= riskScore <= max: 0-9, 10-19, ... 90-100. */
export interface ScoreBucket {
  min: number
  max: number
  count: number
}

/**
 * delivered: the receiver answered 2xx; failed: another status or a broken connection; timeout:
 * no answer within 10 s; refused: Tollgate would not send it (address not allowed, no usable secret);
 * dropped: events not sent because too many were in flight or waiting (error says how many and why).
 */
export type DeliveryOutcome = 'delivered' | 'failed' | 'timeout' | 'refused' | 'dropped'

export interface WebhookDelivery {
  id: string
  event: string
  url: string
  /** A send from "Send test event". */
  test: boolean
  /** The blocked verification it told of (its row's id in the log); null for surge events, tests and dropped counts. */
  verificationId: string | null
  /** For a resend, the first delivery of the event it sent again (whose id it carried); else null. */
  redeliveryOf: string | null
  outcome: DeliveryOutcome
  statusCode: number | null
  latencyMs: number
  error: string | null
  createdAt: string
}

/** GET /sites/{id}/surge: the site's challenge rate now against its surge threshold. */
export interface SurgeStatus {
  /** 0 when surge protection is off (nothing is counted then). */
  threshold: number
  challengesPerMinute: number
  extraBits: number
  /** When the surge going on began; null outside one. */
  startedAt: string | null
}

/**
 * Who made an audited change: a logged-in session, an API key, the server's operator (its
 * `npm run account`), or nobody logged in (a sign-up, a failed log-in). A later server may add types.
 */
export interface AuditActor {
  type: 'session' | 'api-key' | 'operator' | 'anonymous' | (string & {})
  id: string | null
  /** The account's e-mail address for a session, the key's name for an API key. */
  name: string | null
  keyPrefix: string | null
  clientIp: string | null
  userAgent: string | null
  /** The account whose session or API key acted, and its address then; null for others and for older events (a server before them leaves them out). */
  accountId?: string | null
  email?: string | null
}

/** One event of the account's audit log (GET /api/v1/audit-log). */
export interface AuditEvent {
  id: string
  createdAt: string
  /** One of AUDIT_ACTIONS, or a code a later server added. */
  action: string
  actor: AuditActor
  /** The site as it was named then (also once deleted); null for the account's own events. */
  site: { id: string; name: string } | null
  /** By action: site.updated has changes ({ field, from, to }), api_key.* name and prefix... */
  details: Record<string, unknown>
}

export interface AuditLogPage {
  items: AuditEvent[]
  nextCursor: string | null
}

export type SiteRole = 'owner' | 'admin' | 'viewer'
export type MemberRole = Exclude<SiteRole, 'owner'>

export interface SiteMember {
  accountId: string
  email: string
  role: SiteRole
  since: string
  /** Whether the account has two-factor authentication on: in the list the owner and admins read only. */
  twoFactor?: boolean
}

export interface SiteInvitation {
  id: string
  role: MemberRole
  email: string | null
  invitedBy: string
  createdAt: string
  expiresAt: string
}

/** Only the answer that made it carries the token and its link. */
export interface CreatedInvitation extends SiteInvitation {
  token: string
  url: string
}

export interface InvitationPreview {
  site: { id: string; name: string }
  role: MemberRole
  invitedBy: string
  /** Whether only the account with one e-mail address may accept it. */
  boundToEmail: boolean
  /** Whether this account may accept it (false: bound to another account's address, which is not shown). */
  forYou: boolean
  /** The bound address when it is this account's; else null. */
  email: string | null
  expiresAt: string
  /** Whether the site's owner requires two-factor authentication of its members: accepting needs it on first. */
  twoFactorRequired: boolean
}

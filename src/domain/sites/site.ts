import type { TokenAddressCheck } from '../token/address-binding.js'
import { DEFAULT_WEBHOOK_EVENTS, type WebhookEvent } from '../webhooks/webhook-payload.js'

/** Per-site settings with their defaults (DESIGN section 3). */
export interface SiteSettings {
  webhookUrl: string | null
  /** The events the webhook is sent (in WEBHOOK_EVENTS' order); by default the spec's verification.blocked. */
  webhookEvents: WebhookEvent[]
  /** Leading zero bits of the base proof of work; adaptive difficulty only raises it. */
  difficulty: number
  challengeLifetimeSeconds: number
  /** riskScore below this is allow. */
  challengeThreshold: number
  /** riskScore from this up is block; between the two thresholds is challenge (step-up). */
  blockThreshold: number
  /** Step-up rounds before the outcome must be allow or block. */
  maxStepUps: number
  /**
   * Challenges issued per minute, for the whole site, from which every challenge of the site is
   * harder (surge protection, domain/challenge/site-surge.ts); 0 turns it off.
   */
  surgeChallengesPerMinute: number
  /**
   * Addresses and ranges (normalized: domain/sites/allowed-addresses.ts) whose verifications are
   * allowed at score 0 without being judged: an office, a monitor, a partner's servers.
   */
  allowedAddresses: string[]
  /**
   * Addresses and ranges (normalized as allowedAddresses are: domain/sites/blocklist.ts) whose
   * verifications are blocked at score 100 (address_blocked), unless the allowlist names them too.
   */
  blockedAddresses: string[]
  /** ISO 3166-1 alpha-2 codes, uppercase and sorted, whose addresses are blocked at score 100 (country_blocked). */
  blockedCountries: string[]
  /**
   * Where a visitor the gate turns away can ask for help (an https: page outside the gate, or a
   * mailto: address), linked from the gate's denied page with the verification's reference; null: none.
   */
  blockedHelpUrl: string | null
  /**
   * Whether the site's tokens carry where they were earned, for Siteverify to compare with the
   * remoteip a backend sends (off, report) or to refuse a token of another address (refuse):
   * domain/token/address-binding.ts.
   */
  tokenAddressCheck: TokenAddressCheck
  /**
   * Whether the site's members (admins and viewers, not its owner) reach it only from an account
   * with two-factor authentication on: domain/sites/site-roles.ts, needsTwoFactor.
   */
  requireTwoFactor: boolean
}

export const defaultSiteSettings: SiteSettings = {
  webhookUrl: null,
  webhookEvents: [...DEFAULT_WEBHOOK_EVENTS],
  difficulty: 18,
  challengeLifetimeSeconds: 120,
  challengeThreshold: 40,
  blockThreshold: 70,
  maxStepUps: 2,
  surgeChallengesPerMinute: 0,
  allowedAddresses: [],
  blockedAddresses: [],
  blockedCountries: [],
  blockedHelpUrl: null,
  tokenAddressCheck: 'off',
  requireTwoFactor: false,
}

export interface PreviousSecret {
  keyHash: string
  expiresAt: Date
}

/** How long a replaced webhook secret keeps signing beside the new one, unless the operator ends it. */
export const PREVIOUS_WEBHOOK_SECRET_GRACE_MS = 24 * 60 * 60 * 1000

export interface PreviousWebhookSecret {
  /** Sealed as webhookSecretCiphertext is. */
  ciphertext: string
  expiresAt: Date
}

export interface Site {
  id: string
  accountId: string | null
  name: string
  siteKey: string
  secretKeyHash: string
  /**
   * The keys replaced by the last two rotations, newest first, each until its grace period ends
   * (see acceptsSecretKey): a rotation within the grace period of the one before keeps the key
   * from before both, which is most likely the one still deployed.
   */
  previousSecrets: PreviousSecret[]
  domains: string[]
  settings: SiteSettings
  /** AES-256-GCM ciphertext of the webhook secret (see domain/secret-box), or null. */
  webhookSecretCiphertext: string | null
  /**
   * The webhook secret the last replacement replaced, until its overlap ends (it may have ended
   * already: see liveWebhookSecrets); deliveries are signed with it too meanwhile.
   */
  previousWebhookSecret: PreviousWebhookSecret | null
  /** When the secret key was last rotated (migration 039); null until the first rotation. */
  secretRotatedAt: Date | null
  createdAt: Date
  updatedAt: Date
  /** Counts the changes of the site's row; the dashboard API's ETag (If-Match refuses a stale save). */
  revision: string
}

/** Stored settings merged over the defaults, so sites created before a setting existed get it. */
export function withDefaultSettings(stored: Partial<SiteSettings>): SiteSettings {
  // Lists of their own: no site's settings share an array with the defaults.
  return {
    ...defaultSiteSettings,
    webhookEvents: [...defaultSiteSettings.webhookEvents],
    allowedAddresses: [...defaultSiteSettings.allowedAddresses],
    blockedAddresses: [...defaultSiteSettings.blockedAddresses],
    blockedCountries: [...defaultSiteSettings.blockedCountries],
    ...stored,
  }
}

/** The replaced webhook secret while it still signs beside the current one, else null. */
export function livePreviousWebhookSecret(site: Pick<Site, 'previousWebhookSecret'>, now: number): PreviousWebhookSecret | null {
  const previous = site.previousWebhookSecret
  return previous !== null && now < previous.expiresAt.getTime() ? previous : null
}

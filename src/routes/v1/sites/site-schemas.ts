import { Type } from 'typebox'
import { NullableInput } from '../dashboard-schemas.js'
import { named } from '../named-schemas.js'
import { MAX_ALLOWED_ADDRESSES } from '../../../domain/sites/allowed-addresses.js'
import { MAX_BLOCKED_ADDRESSES, MAX_BLOCKED_COUNTRIES } from '../../../domain/sites/blocklist.js'
import { previousSecretsEnd } from '../../../domain/sites/site-keys.js'
import { livePreviousWebhookSecret, PREVIOUS_WEBHOOK_SECRET_GRACE_MS, type Site as SiteRecord } from '../../../domain/sites/site.js'
import { SITE_ROLES, type SiteRole } from '../../../domain/sites/site-roles.js'
import { tokenAddressChecks } from '../../../domain/token/address-binding.js'
import { WEBHOOK_EVENTS } from '../../../domain/webhooks/webhook-payload.js'
import { stringEnum } from '../public-schemas.js'
import {
  BLOCKED_HELP_URL_MAX_LENGTH,
  MAX_DOMAINS,
  numericSettingLimits,
  SITE_NAME_MAX_LENGTH,
  WEBHOOK_SECRET_MAX_LENGTH,
  WEBHOOK_URL_MAX_LENGTH,
  WEBHOOK_SECRET_MIN_DISTINCT,
  WEBHOOK_SECRET_MIN_LENGTH,
  type NumericSettingName,
} from '../../../domain/sites/site-input.js'

const settingDescriptions: Record<NumericSettingName, string> = {
  difficulty: 'Leading zero bits of the base proof of work',
  challengeLifetimeSeconds: 'How long a challenge can be solved',
  challengeThreshold: 'riskScore below this is allow',
  blockThreshold: 'riskScore from this up is block (between the two: challenge, a step-up)',
  maxStepUps: 'Step-up rounds before the outcome must be allow or block',
  surgeChallengesPerMinute:
    'Challenges issued per minute for the whole site from which every challenge is harder (one leading zero bit more, and one more per doubling, at most 4); 0 is off',
}

/**
 * Ranges are stated in the descriptions but checked in the handlers (domain/sites/site-input),
 * which report every problem of a request at once in words people understand.
 */
function describeSetting(name: NumericSettingName): string {
  const { minimum, maximum } = numericSettingLimits[name]
  return `${settingDescriptions[name]}; an integer from ${minimum} to ${maximum}`
}

/**
 * A site's body may carry a full address allowlist and a full blocklist (about 40 KB of IPv6
 * ranges each) and every country, beyond the service's 16 KB.
 */
export const SITE_BODY_LIMIT_BYTES = 128 * 1024

const ALLOWED_ADDRESSES_DESCRIPTION =
  'Addresses and ranges (203.0.113.7, 203.0.113.0/24, 2001:db8::/48) whose verifications are allowed at riskScore 0 without being judged, ' +
  'and whose challenges are not made harder nor rate limited: an office, an uptime monitor, a partner\'s servers. IPv4 clients are matched against IPv4 entries only; ' +
  'an IPv6 range containing ::ffff:0:0/96 is refused. ' +
  `Stored normalized (host bits cleared); at most ${MAX_ALLOWED_ADDRESSES} distinct entries (repeats are dropped before counting), none wider than /8 (IPv4) or /24 (IPv6). ` +
  'An address on both this list and blockedAddresses is allowed'

const BLOCKED_ADDRESSES_DESCRIPTION =
  'Addresses and ranges (203.0.113.7, 203.0.113.0/24, 2001:db8::/32) whose verifications are blocked at riskScore 100 with the anomaly address_blocked (no token; ' +
  'logged and sent to the verification.blocked webhook as any block), once their proof of work checks out; their challenges are issued as ever. ' +
  `Stored normalized as allowedAddresses are; at most ${MAX_BLOCKED_ADDRESSES} distinct entries (repeats are dropped before counting), none wider than /8 (IPv4) or /16 (IPv6). ` +
  'allowedAddresses wins over this list'

const BLOCKED_COUNTRIES_DESCRIPTION =
  'ISO 3166-1 alpha-2 codes (DE, US; XK for Kosovo) of the countries whose addresses are blocked at riskScore 100 with the anomaly country_blocked, as the offline IP data places them (docs/risk.md). ' +
  `Stored uppercase, sorted, each once (so at most ${MAX_BLOCKED_COUNTRIES}); XX (no known country) is refused. allowedAddresses wins over this list`

const WEBHOOK_EVENTS_DESCRIPTION =
  'The events the webhook is sent: verification.blocked (the default, alone), surge.started and surge.ended (the site\'s challenge rate reached its surge threshold, and later stayed below it for 3 minutes); ' +
  '[] sends none (a webhook paused); docs/webhooks.md'

const BLOCKED_HELP_URL_DESCRIPTION =
  "Where a visitor the gate turns away can ask for help: the gate's denied page links it (\"Contact the site's owner\") with the verification's reference, " +
  'as the ref query parameter of an https URL, or in the body of a mailto: address (Reference: <ref>). ' +
  'It must lie outside the gate (another host, or a path the proxy does not send to the check: docs/gate.md), or the gate would turn the visitor away there too. ' +
  `An https URL (plain http only for localhost in development) or mailto: address, at most ${BLOCKED_HELP_URL_MAX_LENGTH} characters; null: no link`

const TOKEN_ADDRESS_CHECK_DESCRIPTION =
  "Whether the site's tokens say where they were earned (docs/core-flow.md, section 6): off (the default) says nothing; report makes Siteverify, " +
  'given remoteip, answer remoteipMatch: whether remoteip is in the address (IPv4) or /64 (IPv6) that earned the token, ' +
  '(null for another family: a dual-stack visitor); refuse does so and also refuses a token redeemed for another address of the same family ' +
  "(invalid-input-response), and the gate's clearance for one. Tokens issued before a change keep what they were issued with"

const REQUIRE_TWO_FACTOR_DESCRIPTION =
  'Whether the members (admins and viewers) reach the site only from an account with two-factor authentication on: one without it gets 403 ' +
  "site_requires_two_factor from the site's routes (leaving it aside), does not see the site in its list, and cannot accept an invitation to it. " +
  'Only the owner changes it (403 forbidden for an admin), and turns it on only with two-factor on for the owner\'s own account; the owner is never shut out'

const settingsViewProperties = {
  webhookUrl: Type.Union([Type.String(), Type.Null()], {
    description: 'Where the webhook events (webhookEvents) are sent; null for a viewer of a shared site, whatever is set (webhookUrlSet says whether one is)',
  }),
  webhookUrlSet: Type.Boolean({ description: 'Whether a webhook URL is set' }),
  webhookEvents: Type.Array(stringEnum(WEBHOOK_EVENTS), { description: WEBHOOK_EVENTS_DESCRIPTION }),
  webhookSecretSet: Type.Boolean({ description: 'Whether a webhook secret is stored (the secret itself is write-only)' }),
  previousWebhookSecretExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description:
      `Until when the webhook secret the last new one replaced still signs beside it (webhook-signature carries both; X-Service-Signature the new one alone): ${PREVIOUS_WEBHOOK_SECRET_GRACE_MS / 3_600_000} hours after it was replaced; null when none does`,
  }),
  difficulty: Type.Integer({ description: describeSetting('difficulty') }),
  challengeLifetimeSeconds: Type.Integer({ description: describeSetting('challengeLifetimeSeconds') }),
  challengeThreshold: Type.Integer({ description: describeSetting('challengeThreshold') }),
  blockThreshold: Type.Integer({ description: describeSetting('blockThreshold') }),
  maxStepUps: Type.Integer({ description: describeSetting('maxStepUps') }),
  surgeChallengesPerMinute: Type.Integer({ description: describeSetting('surgeChallengesPerMinute') }),
  allowedAddresses: Type.Array(Type.String(), { description: ALLOWED_ADDRESSES_DESCRIPTION }),
  blockedAddresses: Type.Array(Type.String(), { description: BLOCKED_ADDRESSES_DESCRIPTION }),
  blockedCountries: Type.Array(Type.String(), { description: BLOCKED_COUNTRIES_DESCRIPTION }),
  blockedHelpUrl: Type.Union([Type.String(), Type.Null()], { description: BLOCKED_HELP_URL_DESCRIPTION }),
  tokenAddressCheck: stringEnum(tokenAddressChecks, { description: TOKEN_ADDRESS_CHECK_DESCRIPTION }),
  requireTwoFactor: Type.Boolean({ description: REQUIRE_TWO_FACTOR_DESCRIPTION }),
}

const siteProperties = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  siteKey: Type.String({ description: 'Public: the X-Site-Key of the SDK' }),
  domains: Type.Array(Type.String(), { description: 'Hostnames allowed to use the site key; empty allows any (development)' }),
  settings: named('SiteSettings', Type.Object(settingsViewProperties)),
  previousSecretExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Until when the secret keys replaced by rotations still work (the last of them to stop; each stops 2 hours after it was replaced); null when none does',
  }),
  secretRotatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the secret key was last rotated (POST /sites/{id}/secret/rotate); null until the first rotation, the key being as old as the site (createdAt)',
  }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  role: stringEnum(SITE_ROLES, {
    description:
      "The requesting account's role on the site: owner (the account that made it; everything), admin (everything but deleting the site) or viewer (reads only)",
  }),
}

export const Site = named('Site', Type.Object(siteProperties))

/** A site of the list, with its last 24 hours when asked for (`include=summary`). */
export const ListedSite = named('ListedSite', Type.Object({
  ...siteProperties,
  summary: Type.Optional(
    Type.Object(
      {
        from: Type.String({ format: 'date-time', description: 'Start of the first UTC hour counted: the 23rd before the current one' }),
        verifications: Type.Integer({ description: 'Verifications since from, of every action (allowed, challenged, blocked, rejected)' }),
        blocked: Type.Integer({ description: 'Those of them blocked' }),
      },
      {
        description:
          "With include=summary: the site's verifications in the current UTC hour so far and the 23 before it, as GET /sites/{id}/stats counts them by default (its totals.total and totals.block)",
      },
    ),
  ),
}))

export const SiteWithSecret = named('SiteWithSecret', Type.Object({
  ...siteProperties,
  secretKey: Type.String({ description: 'For Siteverify; shown only in this answer' }),
}))

/**
 * Request bodies are built twice: the validating schema bounds only what is read (a name of 1,000
 * characters at most), so that the handlers report every problem of a request at once, in words
 * (domain/sites/site-input); the documented one (schema.documentedBody) states the real limits,
 * so that generated clients and form validators can check them before sending.
 */
function requestBodies(withLimits: boolean) {
  const limits = <Options extends object>(options: Options, real: object): Options => (withLimits ? { ...options, ...real } : options)

  const nullableSetting = (name: NumericSettingName) => {
    const { minimum, maximum } = numericSettingLimits[name]
    return Type.Optional(NullableInput(Type.Integer(limits({ description: `${describeSetting(name)}; null restores the default` }, { minimum, maximum }))))
  }

  const SettingsInput = Type.Object(
    {
      webhookUrl: Type.Optional(
        NullableInput(
          Type.String(
            limits(
              { maxLength: 4096, description: 'An http(s) URL (https only in production); requires a webhook secret; null removes it and, unless webhookSecret sets a new one, the secret with it' },
              { maxLength: WEBHOOK_URL_MAX_LENGTH },
            ),
          ),
        ),
      ),
      webhookSecret: Type.Optional(
        NullableInput(
          Type.String(
            limits(
              {
                maxLength: 4096,
                description: `Signs webhook bodies (HMAC-SHA256); ${WEBHOOK_SECRET_MIN_LENGTH} to ${WEBHOOK_SECRET_MAX_LENGTH} characters, at least ${WEBHOOK_SECRET_MIN_DISTINCT} of them different, no white space at either end; write-only; null removes it (and the replaced one with it). ` +
                  `A new secret replaces the stored one, which keeps signing beside it for ${PREVIOUS_WEBHOOK_SECRET_GRACE_MS / 3_600_000} hours (previousWebhookSecretExpiresAt)`,
              },
              { minLength: WEBHOOK_SECRET_MIN_LENGTH, maxLength: WEBHOOK_SECRET_MAX_LENGTH },
            ),
          ),
        ),
      ),
      previousWebhookSecretExpiresAt: Type.Optional(
        Type.Null({
          description:
            'null stops the webhook secret the last new one replaced from signing now, instead of at the time reads show (it leaked); ' +
            'sent with a new webhookSecret, the secret replaced never signs beside it',
        }),
      ),
      webhookEvents: Type.Optional(
        NullableInput(
          Type.Array(
            withLimits ? stringEnum(WEBHOOK_EVENTS) : Type.String({ maxLength: 100 }),
            { maxItems: 100, description: `${WEBHOOK_EVENTS_DESCRIPTION}; replaces the list (a kind named twice is kept once); null restores the default` },
          ),
        ),
      ),
      difficulty: nullableSetting('difficulty'),
      challengeLifetimeSeconds: nullableSetting('challengeLifetimeSeconds'),
      challengeThreshold: nullableSetting('challengeThreshold'),
      blockThreshold: nullableSetting('blockThreshold'),
      maxStepUps: nullableSetting('maxStepUps'),
      surgeChallengesPerMinute: nullableSetting('surgeChallengesPerMinute'),
      // The lists' caps count distinct entries (repeats are dropped first), which maxItems cannot
      // say: the documented bound is the validating one, the cap is in the descriptions.
      allowedAddresses: Type.Optional(
        NullableInput(
          Type.Array(
            Type.String(limits({ maxLength: 1000 }, { minLength: 1, maxLength: 100 })),
            { maxItems: 10 * MAX_ALLOWED_ADDRESSES, description: `${ALLOWED_ADDRESSES_DESCRIPTION}; replaces the list; null or [] empties it` },
          ),
        ),
      ),
      blockedAddresses: Type.Optional(
        NullableInput(
          Type.Array(
            Type.String(limits({ maxLength: 1000 }, { minLength: 1, maxLength: 100 })),
            { maxItems: 10 * MAX_BLOCKED_ADDRESSES, description: `${BLOCKED_ADDRESSES_DESCRIPTION}; replaces the list; null or [] empties it` },
          ),
        ),
      ),
      blockedCountries: Type.Optional(
        NullableInput(
          Type.Array(
            Type.String(limits({ maxLength: 100 }, { minLength: 2, maxLength: 2 })),
            { maxItems: 10 * MAX_BLOCKED_COUNTRIES, description: `${BLOCKED_COUNTRIES_DESCRIPTION}; replaces the list (lowercase is accepted); null or [] empties it` },
          ),
        ),
      ),
      blockedHelpUrl: Type.Optional(
        NullableInput(Type.String(limits({ maxLength: 4096, description: `${BLOCKED_HELP_URL_DESCRIPTION}; null removes it` }, { maxLength: BLOCKED_HELP_URL_MAX_LENGTH }))),
      ),
      tokenAddressCheck: Type.Optional(
        NullableInput(withLimits ? stringEnum(tokenAddressChecks, { description: `${TOKEN_ADDRESS_CHECK_DESCRIPTION}; null restores off` }) : Type.String({ maxLength: 100 })),
      ),
      requireTwoFactor: Type.Optional(NullableInput(Type.Boolean({ description: `${REQUIRE_TWO_FACTOR_DESCRIPTION}; null restores false` }))),
    },
    { additionalProperties: false },
  )

  const nameSchema = Type.String(limits({ maxLength: 1000, description: `1 to ${SITE_NAME_MAX_LENGTH} characters` }, { minLength: 1, maxLength: SITE_NAME_MAX_LENGTH }))
  const domainsSchema = Type.Array(
    Type.String(limits({ maxLength: 1000 }, { minLength: 1, maxLength: 253 })),
    limits({ maxItems: 1000, description: `Up to ${MAX_DOMAINS} hostnames such as example.com (no scheme, port or path)` }, { maxItems: MAX_DOMAINS }),
  )

  // The examples are what Swagger UI's Try it out sends: requests that work as they stand.
  const CreateSiteBody = Type.Object(
    { name: nameSchema, domains: Type.Optional(domainsSchema), settings: Type.Optional(SettingsInput) },
    { additionalProperties: false, examples: [{ name: 'My shop', domains: ['shop.example.com'], settings: { difficulty: 18 } }] },
  )

  const UpdateSiteBody = Type.Object(
    { name: Type.Optional(nameSchema), domains: Type.Optional(domainsSchema), settings: Type.Optional(SettingsInput) },
    {
      additionalProperties: false,
      description: 'Absent fields keep their values; settings merge key by key; null clears a setting',
      examples: [{ settings: { webhookUrl: 'https://shop.example.com/hooks/tollgate', webhookSecret: 'a-long-random-secret-for-webhooks' } }],
    },
  )
  return { CreateSiteBody, UpdateSiteBody }
}

export const { CreateSiteBody, UpdateSiteBody } = requestBodies(false)
/** The same bodies with their real limits, for the OpenAPI document only (schema.documentedBody). */
export const documentedBodies = requestBodies(true)

/**
 * A site as the dashboard API shows it to an account with `role`: never the secret key, never the
 * webhook secret, and to a viewer not the webhook URL either: a Slack or Discord incoming-webhook
 * URL is itself the credential that posts to the channel, and a viewer may not change, so need
 * not see, where events go.
 */
export function siteView(site: SiteRecord, role: SiteRole): Type.Static<typeof Site> {
  const webhookUrl = role === 'viewer' ? null : site.settings.webhookUrl
  return {
    id: site.id,
    name: site.name,
    siteKey: site.siteKey,
    domains: site.domains,
    settings: { ...site.settings, webhookUrl, webhookUrlSet: site.settings.webhookUrl !== null, webhookSecretSet: site.webhookSecretCiphertext !== null,
      previousWebhookSecretExpiresAt: livePreviousWebhookSecret(site, Date.now())?.expiresAt.toISOString() ?? null,
    },
    previousSecretExpiresAt: previousSecretsEnd(site, Date.now())?.toISOString() ?? null,
    secretRotatedAt: site.secretRotatedAt?.toISOString() ?? null,
    createdAt: site.createdAt.toISOString(),
    updatedAt: site.updatedAt.toISOString(),
    role,
  }
}

/**
 * A site's configuration as `POST /api/v1/sites` takes it (the create body's schema): its name,
 * domains and every setting but the webhook, whose URL goes with a secret that is never shown (and
 * a chat service's webhook URL is a credential itself); no keys, ids or timestamps. Another
 * instance creates the same site from it, with keys of its own.
 */
export function siteConfigOf(site: SiteRecord): Type.Static<typeof CreateSiteBody> {
  const { webhookUrl: _webhookUrl, ...settings } = site.settings
  return {
    name: site.name,
    domains: [...site.domains],
    settings: {
      ...settings,
      webhookEvents: [...settings.webhookEvents],
      allowedAddresses: [...settings.allowedAddresses],
      blockedAddresses: [...settings.blockedAddresses],
      blockedCountries: [...settings.blockedCountries],
    },
  }
}

import { isIPv6 } from 'node:net'
import { domainToASCII } from 'node:url'
import { findDisplayNameProblem, normalizeDisplayName } from '../display-name.js'
import { isWebhookEvent, WEBHOOK_EVENTS, type WebhookEvent } from '../webhooks/webhook-payload.js'
import { findWebhookUrlProblem } from '../webhooks/webhook-url-policy.js'
import { tokenAddressChecks, type TokenAddressCheck } from '../token/address-binding.js'
import { normalizeAllowedAddresses } from './allowed-addresses.js'
import { normalizeBlockedAddresses, normalizeBlockedCountries } from './blocklist.js'
import type { SiteSettings } from './site.js'

/** A problem with one field of a request, named by its dotted path (`settings.difficulty`, `domains.0`). */
export interface FieldIssue {
  field: string
  message: string
}

/** Inclusive ranges of the numeric settings; the HTTP schemas publish the same numbers. */
export const numericSettingLimits = {
  difficulty: { minimum: 1, maximum: 32 },
  challengeLifetimeSeconds: { minimum: 10, maximum: 3600 },
  challengeThreshold: { minimum: 0, maximum: 100 },
  blockThreshold: { minimum: 0, maximum: 100 },
  maxStepUps: { minimum: 0, maximum: 5 },
  surgeChallengesPerMinute: { minimum: 0, maximum: 10_000_000 },
} as const satisfies Record<Exclude<keyof SiteSettings, 'webhookUrl' | 'webhookEvents' | 'allowedAddresses' | 'blockedAddresses' | 'blockedCountries' | 'blockedHelpUrl' | 'tokenAddressCheck' | 'requireTwoFactor'>, { minimum: number; maximum: number }>

export type NumericSettingName = keyof typeof numericSettingLimits

export const SITE_NAME_MAX_LENGTH = 100
export const MAX_DOMAINS = 100
export const WEBHOOK_URL_MAX_LENGTH = 2048
export const BLOCKED_HELP_URL_MAX_LENGTH = 500
export const WEBHOOK_SECRET_MIN_LENGTH = 16
export const WEBHOOK_SECRET_MAX_LENGTH = 256
/** Fewer different characters than this is a placeholder ('x' sixteen times), not a secret. */
export const WEBHOOK_SECRET_MIN_DISTINCT = 8

/** Settings as a create or update request carries them: absent keeps, null clears (updates). */
export type SettingsInput = { [Name in NumericSettingName]?: number | null } & {
  webhookUrl?: string | null
  webhookSecret?: string | null
  /** null stops the webhook secret a replacement replaced now (the overlap ended); no other value. */
  previousWebhookSecretExpiresAt?: null
  webhookEvents?: string[] | null
  allowedAddresses?: string[] | null
  blockedAddresses?: string[] | null
  blockedCountries?: string[] | null
  blockedHelpUrl?: string | null
  /** One of tokenAddressChecks (validateSettingsInput says so otherwise). */
  tokenAddressCheck?: string | null
  /** Only the owner changes it, and turns it on only with two-factor on (routes/v1/sites/site-rules.ts, checkTwoFactorRequirement). */
  requireTwoFactor?: boolean | null
}

export interface InputRules {
  /** Wherever private webhooks are refused (production's default), plain http is refused too. */
  isHttpsRequired: boolean
  /** WEBHOOK_ALLOW_PRIVATE: whether a webhook URL may name a private address (link-local and metadata ones never). */
  allowPrivateWebhooks: boolean
}

const hostnameLabel = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/**
 * The hostname an operator meant, lowercased and in its ASCII (punycode) form, as browsers send
 * it in Origin; or undefined when the entry is not a bare hostname (scheme, port, path,
 * wildcard, spaces, percent escapes, which would otherwise be decoded into another name). An IP
 * address is a hostname for this purpose (local development): IPv6 with or without its
 * brackets, kept without them in the URL parser's compressed form, as Origin is read.
 */
export function normalizeHostname(entry: string): string | undefined {
  const trimmed = entry.trim().replace(/\.$/, '')
  const bare = trimmed.startsWith('[') && trimmed.endsWith(']') ? trimmed.slice(1, -1) : trimmed
  // Not even an IPv6 zone (fe80::1%eth0): browsers never send one in Origin, and the URL parser refuses it.
  if (bare.includes('%')) return undefined
  if (isIPv6(bare)) return new URL(`http://[${bare}]`).hostname.slice(1, -1)
  if (trimmed === '' || /[\s/:*?#@%\\[\]]/.test(trimmed)) return undefined
  const ascii = domainToASCII(trimmed.toLowerCase())
  if (ascii === '' || ascii.length > 253) return undefined
  return ascii.split('.').every((label) => hostnameLabel.test(label)) ? ascii : undefined
}

export function validateSiteName(name: string): FieldIssue[] {
  const problem = findDisplayNameProblem(name, SITE_NAME_MAX_LENGTH)
  return problem === undefined ? [] : [{ field: 'name', message: problem }]
}

/**
 * Why an entry is no hostname, naming the hostname to list instead when the entry says one: a
 * wildcard (*.client01.example: its subdomains are included already) or an address with a
 * scheme, port or path (https://client01.example:8443/shop: the port is not compared).
 */
function hostnameProblem(entry: string): string {
  const got = `(got ${JSON.stringify(entry.slice(0, 100))})`
  const trimmed = entry.trim()
  const wildcard = /^\*\.(.+)$/.exec(trimmed)
  const meant = wildcard === null ? hostnameOfAddress(trimmed) : normalizeHostname(wildcard[1] ?? '')
  if (meant !== undefined) {
    const why = wildcard === null ? 'the scheme, port and path are not compared' : 'subdomains are included without a wildcard'
    return `${why}: list ${meant} ${got}`
  }
  return `must be a hostname such as example.com, without scheme, port, path or wildcard ${got}`
}

/** The hostname of an entry written as an address (with a scheme, or a port or path after it), if it names one. */
function hostnameOfAddress(entry: string): string | undefined {
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `http://${entry}`)
    // A name of one label ("bad" of "bad/entry") is likelier a typing slip than the host meant: not offered.
    const isLikelyHost = url.hostname.includes('.') || url.hostname.startsWith('[') || url.hostname === 'localhost'
    return url.username === '' && url.password === '' && isLikelyHost ? normalizeHostname(url.hostname) : undefined
  } catch {
    return undefined
  }
}

/** What a page without a host (a sandboxed frame, a file: page, an app's) sends as its Origin. */
const OPAQUE_ORIGIN = 'null'

/**
 * Why `null` is no domain: it reads as the opaque origin such pages send, which no domain admits
 * (verify refuses it whatever is listed), while it would match only a host named null.
 */
const OPAQUE_ORIGIN_PROBLEM =
  'cannot admit the origin null of pages without a host (a sandboxed frame, a file: page, an app without a host): ' +
  "give the app's pages a host and list it, or give the app a site of its own without domains (docs/apps.md)"

/** Domains normalized and deduplicated, or the issues that prevent it. */
export function normalizeDomains(entries: readonly string[]): { domains: string[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = []
  const domains: string[] = []
  if (entries.length > MAX_DOMAINS) issues.push({ field: 'domains', message: `must list at most ${MAX_DOMAINS} hostnames` })
  entries.forEach((entry, index) => {
    const hostname = normalizeHostname(entry)
    if (hostname === undefined) {
      issues.push({ field: `domains.${index}`, message: hostnameProblem(entry) })
    } else if (hostname === OPAQUE_ORIGIN) {
      issues.push({ field: `domains.${index}`, message: OPAQUE_ORIGIN_PROBLEM })
    } else if (!domains.includes(hostname)) {
      domains.push(hostname)
    }
  })
  return { domains, issues }
}

/**
 * The webhook URL as deliveries will call it (the URL parser's form: it drops tabs and line
 * breaks, trims, lowercases the host), so that what the dashboard shows is the address called;
 * or the problem that prevents it.
 */
function checkWebhookUrl(url: string, rules: InputRules): { href: string } | { problem: string } {
  const problem = findWebhookUrlInputProblem(url, rules)
  return problem === undefined ? { href: new URL(url).href } : { problem }
}

/**
 * A URL setting parsed, or its problem: longer than maxLength as sent or as the URL parser writes
 * it (what is stored and shown), or not a URL at all (`unparsable`).
 */
function parseUrlSetting(url: string, maxLength: number, unparsable: string): { parsed: URL } | { problem: string } {
  const tooLong = `must be at most ${maxLength} characters`
  if (url.length > maxLength) return { problem: tooLong }
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { problem: unparsable }
  }
  return parsed.href.length > maxLength ? { problem: tooLong } : { parsed }
}

function findWebhookUrlInputProblem(url: string, rules: InputRules): string | undefined {
  const checked = parseUrlSetting(url, WEBHOOK_URL_MAX_LENGTH, 'must be an absolute URL such as https://example.com/hooks/tollgate')
  if ('problem' in checked) return checked.problem
  const { parsed } = checked
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must be an http or https URL'
  if (rules.isHttpsRequired && parsed.protocol !== 'https:') return 'must use https'
  // Credentials in the URL would be shown back on every read; webhookSecret authenticates instead.
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain a user name or password'
  // An address every delivery would be refused at (a metadata service, say) is refused now, where
  // the operator sees why; names are judged at each delivery, by the address they resolve to.
  const problem = findWebhookUrlProblem(url, { allowPrivateAddresses: rules.allowPrivateWebhooks })
  return problem === undefined ? undefined : problem.replace(/^the webhook URL /, '')
}

/**
 * The help link for blocked visitors as the gate's page will show it (the URL parser's form), or
 * the problem that prevents it: an https: URL (plain http only for localhost, as a development
 * gate is), or a mailto: address; never a script (javascript:), nor credentials in the URL.
 */
function checkBlockedHelpUrl(url: string, rules: InputRules): { href: string } | { problem: string } {
  const example = 'must be an https URL such as https://example.com/help or a mailto: address such as mailto:help@example.com'
  const checked = parseUrlSetting(url, BLOCKED_HELP_URL_MAX_LENGTH, example)
  if ('problem' in checked) return checked
  const { parsed } = checked
  if (parsed.protocol === 'mailto:') {
    return /^[^@?\s]+@[^@?\s]+/.test(parsed.pathname) ? { href: parsed.href } : { problem: 'must name an address after mailto: (mailto:help@example.com)' }
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return { problem: example }
  const isLocal = parsed.hostname === 'localhost' || parsed.hostname === '127.0.0.1' || parsed.hostname === '[::1]'
  if (parsed.protocol === 'http:' && (rules.isHttpsRequired || !isLocal)) return { problem: 'must use https (plain http only for localhost in development)' }
  if (parsed.username !== '' || parsed.password !== '') return { problem: 'must not contain a user name or password' }
  return { href: parsed.href }
}

/** Checks each setting the request carries on its own; combinations are checked after merging. */
export function validateSettingsInput(settings: SettingsInput, rules: InputRules): FieldIssue[] {
  const issues: FieldIssue[] = []
  for (const [name, limits] of Object.entries(numericSettingLimits) as [NumericSettingName, { minimum: number; maximum: number }][]) {
    const value = settings[name]
    if (value === undefined || value === null) continue
    if (!Number.isInteger(value) || value < limits.minimum || value > limits.maximum) {
      issues.push({ field: `settings.${name}`, message: `must be an integer from ${limits.minimum} to ${limits.maximum}` })
    }
  }
  if (typeof settings.webhookUrl === 'string') {
    const checked = checkWebhookUrl(settings.webhookUrl, rules)
    if ('problem' in checked) issues.push({ field: 'settings.webhookUrl', message: checked.problem })
  }
  if (typeof settings.blockedHelpUrl === 'string') {
    const checked = checkBlockedHelpUrl(settings.blockedHelpUrl, rules)
    if ('problem' in checked) issues.push({ field: 'settings.blockedHelpUrl', message: checked.problem })
  }
  if (typeof settings.tokenAddressCheck === 'string' && !(tokenAddressChecks as readonly string[]).includes(settings.tokenAddressCheck)) {
    issues.push({ field: 'settings.tokenAddressCheck', message: `must be one of ${tokenAddressChecks.join(', ')}` })
  }
  if (typeof settings.webhookSecret === 'string') {
    const problem = findWebhookSecretProblem(settings.webhookSecret)
    if (problem !== undefined) issues.push({ field: 'settings.webhookSecret', message: problem })
  }
  return issues
}

/**
 * Why a webhook secret can't sign, if it can't: out of bounds, padded with white space (which a
 * receiver reading it from an environment file or a form would likely lose, so that no signature
 * ever matches) or made of a handful of characters (a placeholder anyone could guess).
 */
function findWebhookSecretProblem(secret: string): string | undefined {
  if (secret.length < WEBHOOK_SECRET_MIN_LENGTH || secret.length > WEBHOOK_SECRET_MAX_LENGTH) {
    return `must be from ${WEBHOOK_SECRET_MIN_LENGTH} to ${WEBHOOK_SECRET_MAX_LENGTH} characters`
  }
  if (secret.trim() !== secret) return 'must not begin or end with white space'
  if (new Set(secret).size < WEBHOOK_SECRET_MIN_DISTINCT) {
    return `must contain at least ${WEBHOOK_SECRET_MIN_DISTINCT} different characters (use a random secret)`
  }
  return undefined
}

/**
 * Checks the settings a site would have after the change: thresholds in order, and no webhook
 * URL without a secret to sign with (receivers must be able to reject forged notifications).
 */
export function validateMergedSettings(settings: SiteSettings, hasWebhookSecret: boolean): FieldIssue[] {
  const issues: FieldIssue[] = []
  if (settings.challengeThreshold >= settings.blockThreshold) {
    // Either field may be the one the operator just changed: both are named.
    const values = `(challengeThreshold ${settings.challengeThreshold}, blockThreshold ${settings.blockThreshold})`
    issues.push(
      { field: 'settings.challengeThreshold', message: `must be below blockThreshold ${values}` },
      { field: 'settings.blockThreshold', message: `must be above challengeThreshold ${values}` },
    )
  }
  if (settings.webhookUrl !== null && !hasWebhookSecret) {
    issues.push({ field: 'settings.webhookSecret', message: 'is required when webhookUrl is set (at least 16 characters)' })
  }
  return issues
}

/** Changes to stored settings: a value sets the key, null removes it (back to its default). */
export type SettingsChanges = { [Name in keyof SiteSettings]?: SiteSettings[Name] | null }

/** The event kinds asked for, known ones only, each once, in WEBHOOK_EVENTS' order; or the issues. */
export function normalizeWebhookEvents(entries: readonly string[]): { events: WebhookEvent[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = []
  entries.forEach((entry, index) => {
    if (!isWebhookEvent(entry)) issues.push({ field: `settings.webhookEvents.${index}`, message: `must be one of ${WEBHOOK_EVENTS.join(', ')}` })
  })
  return { events: WEBHOOK_EVENTS.filter((event) => entries.includes(event)), issues }
}

/** The settings to store: the webhook secrets are kept apart (encrypted), everything else as given. */
export function settingsChangesOf(settings: SettingsInput): SettingsChanges {
  const { webhookSecret: _webhookSecret, previousWebhookSecretExpiresAt: _previous, webhookEvents, tokenAddressCheck, ...rest } = settings
  // validateSettingsInput has refused any other check.
  const changes: SettingsChanges = tokenAddressCheck === undefined ? rest : { ...rest, tokenAddressCheck: tokenAddressCheck as TokenAddressCheck | null }
  // normalizeSiteInput has kept only known event kinds.
  return webhookEvents === undefined ? changes : { ...changes, webhookEvents: webhookEvents as WebhookEvent[] | null }
}

/** Settings for a new site: nulls mean "the default", which a new site has anyway. */
export function initialSettingsOf(settings: SettingsInput): Partial<SiteSettings> {
  const initial: Partial<Record<keyof SiteSettings, unknown>> = {}
  for (const [name, value] of Object.entries(settingsChangesOf(settings))) {
    if (value !== null && value !== undefined) initial[name as keyof SiteSettings] = value
  }
  return initial as Partial<SiteSettings>
}

export interface SiteInput {
  name?: string
  domains?: readonly string[]
  settings?: SettingsInput
}

/** A create or update request normalized (trimmed name, lowercased unique domains) with every issue found. */
export function normalizeSiteInput(input: SiteInput, rules: InputRules): { value: SiteInput; issues: FieldIssue[] } {
  const issues: FieldIssue[] = []
  const value: SiteInput = {}
  if (input.name !== undefined) {
    value.name = normalizeDisplayName(input.name)
    issues.push(...validateSiteName(value.name))
  }
  if (input.domains !== undefined) {
    const normalized = normalizeDomains(input.domains)
    value.domains = normalized.domains
    issues.push(...normalized.issues)
  }
  if (input.settings !== undefined) {
    const { webhookUrl, webhookEvents, allowedAddresses, blockedAddresses, blockedCountries, blockedHelpUrl } = input.settings
    const checked = typeof webhookUrl === 'string' ? checkWebhookUrl(webhookUrl, rules) : undefined
    value.settings = checked !== undefined && 'href' in checked ? { ...input.settings, webhookUrl: checked.href } : input.settings
    const help = typeof blockedHelpUrl === 'string' ? checkBlockedHelpUrl(blockedHelpUrl, rules) : undefined
    if (help !== undefined && 'href' in help) value.settings = { ...value.settings, blockedHelpUrl: help.href }
    issues.push(...validateSettingsInput(input.settings, rules))
    if (allowedAddresses !== undefined && allowedAddresses !== null) {
      const normalized = normalizeAllowedAddresses(allowedAddresses)
      value.settings = { ...value.settings, allowedAddresses: normalized.addresses }
      issues.push(...normalized.issues)
    }
    if (blockedAddresses !== undefined && blockedAddresses !== null) {
      const normalized = normalizeBlockedAddresses(blockedAddresses)
      value.settings = { ...value.settings, blockedAddresses: normalized.addresses }
      issues.push(...normalized.issues)
    }
    if (blockedCountries !== undefined && blockedCountries !== null) {
      const normalized = normalizeBlockedCountries(blockedCountries)
      value.settings = { ...value.settings, blockedCountries: normalized.countries }
      issues.push(...normalized.issues)
    }
    if (webhookEvents !== undefined && webhookEvents !== null) {
      const normalized = normalizeWebhookEvents(webhookEvents)
      value.settings = { ...value.settings, webhookEvents: normalized.events }
      issues.push(...normalized.issues)
    }
  }
  return { value, issues }
}

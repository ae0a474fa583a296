import type { ApiKeyAccess } from '../api/types.js'

/** Each access as the API keys page offers it, with what a key of it may do. */
export const accessChoices: readonly { access: ApiKeyAccess; label: string; hint: string }[] = [
  { access: 'full', label: 'Full access', hint: 'Can create, change and delete sites, their settings and webhooks, and rotate their secret keys.' },
  { access: 'read', label: 'Read only', hint: 'Can read analytics, logs and settings (GET requests only); anything else is refused.' },
]

export function accessLabel(access: ApiKeyAccess): string {
  return accessChoices.find((choice) => choice.access === access)?.label ?? access
}

const DAY_MS = 24 * 60 * 60 * 1000

/** The expiries the API keys page offers, in days from the creation; null for never. */
export const expiryChoices = [
  { value: '7d', label: 'In 7 days', days: 7 },
  { value: '30d', label: 'In 30 days', days: 30 },
  { value: '90d', label: 'In 90 days', days: 90 },
  { value: '1y', label: 'In 1 year', days: 365 },
  { value: 'never', label: 'Never', days: null },
] as const

export type ExpiryChoice = (typeof expiryChoices)[number]['value']

/**
 * Never, as before keys could expire: nothing tells the owner of a key about to expire (no e-mail,
 * no warning), and a deploy script whose key lapsed unseen fails with a 401. A shorter one is a
 * choice made for a key, in view of what uses it.
 */
export const DEFAULT_EXPIRY: ExpiryChoice = 'never'

/** The expiresAt the API takes for a choice made at `now`: an ISO 8601 time, or null for never. */
export function expiresAtOf(choice: ExpiryChoice, now: Date): string | null {
  const days = expiryChoices.find((option) => option.value === choice)?.days ?? null
  return days === null ? null : new Date(now.getTime() + days * DAY_MS).toISOString()
}

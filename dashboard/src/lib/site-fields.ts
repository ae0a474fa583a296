import type { SiteSettings } from '../api/types.js'

/** A field of a site that a person edits: its settings, its name and domains, its webhook's secret. */
export type SiteField = 'name' | 'domains' | 'webhookSecret' | Exclude<keyof SiteSettings, 'webhookSecretSet' | 'webhookUrlSet' | 'previousWebhookSecretExpiresAt'>

/**
 * The site's fields as the settings and webhook pages name them, and the activity page's changes
 * with them: one name per field wherever it is shown. A unit goes after a value in a sentence and
 * in brackets after the field's label.
 */
export const siteFields: Record<SiteField, { label: string; unit?: string }> = {
  name: { label: 'Name' },
  domains: { label: 'Allowed domains' },
  allowedAddresses: { label: 'Allowed addresses' },
  blockedAddresses: { label: 'Blocked addresses' },
  blockedCountries: { label: 'Blocked countries' },
  blockedHelpUrl: { label: 'Help link for blocked visitors' },
  tokenAddressCheck: { label: 'Address check at Siteverify' },
  requireTwoFactor: { label: 'Two-factor required of members' },
  difficulty: { label: 'Difficulty' },
  challengeLifetimeSeconds: { label: 'Challenge lifetime', unit: 'seconds' },
  challengeThreshold: { label: 'Challenge threshold' },
  blockThreshold: { label: 'Block threshold' },
  maxStepUps: { label: 'Maximum step-ups' },
  surgeChallengesPerMinute: { label: 'Surge threshold', unit: 'challenges per minute' },
  webhookUrl: { label: 'Webhook URL' },
  webhookEvents: { label: 'Webhook events' },
  webhookSecret: { label: 'Signing secret' },
}

/** A form's label for the field: "Challenge lifetime (seconds)". */
export function fieldLabelOf(field: SiteField): string {
  const { label, unit } = siteFields[field]
  return unit === undefined ? label : `${label} (${unit})`
}

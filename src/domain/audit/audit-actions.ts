/**
 * What the audit log records, by stable code: an operator's integrations (a SIEM, a chat alert)
 * match on these, so a code is never renamed; new ones may be added. A module of its own, which the
 * API's schema and the dashboard's names for the codes share.
 */
export const AUDIT_ACTIONS = [
  'account.created',
  'account.logged_in',
  'account.login_failed',
  'account.logged_out',
  'account.password_check_failed',
  'account.password_changed',
  'account.password_set',
  'account.disabled',
  'account.enabled',
  'account.sessions_ended',
  'account.two_factor_enabled',
  'account.two_factor_disabled',
  'account.two_factor_asked',
  'account.two_factor_failed',
  'account.recovery_code_used',
  'account.recovery_codes_regenerated',
  'account.passkey_added',
  'account.passkey_renamed',
  'account.passkey_removed',
  'account.passkey_refused',
  'session.ended',
  'sessions.ended_others',
  'api_key.created',
  'api_key.updated',
  'api_key.revoked',
  'api_key.address_refused',
  'site.created',
  'site.updated',
  'site.deleted',
  'site.secret_rotated',
  'site.previous_secrets_ended',
  'site.invitation_created',
  'site.invitation_revoked',
  'site.member_joined',
  'site.member_role_changed',
  'site.member_removed',
  'site.member_left',
  'site.ownership_transferred',
  'verification.labeled',
  'verification.label_removed',
  'verifications.deleted',
] as const

export type AuditAction = (typeof AUDIT_ACTIONS)[number]

/** How many distinct addresses an hour's event of repeated attempts (a wrong password) lists. */
export const MAX_REPEATED_ADDRESSES = 20

/**
 * How many distinct details (a refused passkey's reason and name, a refused API key) an hour's
 * event of repeated attempts lists in `variants`.
 */
export const MAX_REPEATED_VARIANTS = 20

/** The span whose repeated attempts one event counts: a UTC hour. */
export const REPEATED_PERIOD_MS = 3_600_000

/** The start of the UTC hour whose event counts an attempt made at `time` (epoch milliseconds). */
export function repeatedHourOf(time: number): Date {
  return new Date(Math.floor(time / REPEATED_PERIOD_MS) * REPEATED_PERIOD_MS)
}

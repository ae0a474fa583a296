import { unreadableDateTimeMessage } from '../date-time-text.js'
import { widensAddressList } from './api-key-addresses.js'

/** What an API key may do: everything its account may (but make keys), or only read. */
export const API_KEY_ACCESS_LEVELS = ['full', 'read'] as const

export type ApiKeyAccess = (typeof API_KEY_ACCESS_LEVELS)[number]

/** Requests that change nothing. OPTIONS is left out: the dashboard API answers none, and a read key needs none. */
const readingMethods = new Set(['GET', 'HEAD'])

/** Whether a key of `access` may make a request of `method`: a read key may only read. */
export function isMethodAllowed(access: ApiKeyAccess, method: string): boolean {
  return access === 'full' || readingMethods.has(method.toUpperCase())
}

/**
 * PostgreSQL's timestamps and JavaScript's dates both reach far past it, but the text either side
 * writes for a later year is not one the other reads: a key for longer than that is a mistake.
 */
const LATEST_EXPIRY_MS = Date.parse('9999-12-31T23:59:59.999Z')

/** The problem of an expiry that is not ahead (by this service's clock, or the database's). */
export const EXPIRY_NOT_AHEAD = 'must be in the future'

/**
 * Until when a new key works, as asked (an ISO 8601 date-time, or null or nothing for never), or
 * why it cannot: a key must not be made expired.
 */
export function resolveApiKeyExpiry(requested: string | null | undefined, now: Date): { expiresAt: Date | null } | { problem: string } {
  if (requested === undefined || requested === null) return { expiresAt: null }
  const expiresAt = new Date(requested)
  const time = expiresAt.getTime()
  // The schema's date-time format lets through a few that Date does not read (a leap second, "+02").
  if (Number.isNaN(time)) return { problem: unreadableDateTimeMessage(requested) }
  if (time <= now.getTime()) return { problem: EXPIRY_NOT_AHEAD }
  if (time > LATEST_EXPIRY_MS) return { problem: 'must be before the year 10000' }
  return { expiresAt }
}

/** What an API key may do, where, from where and until when: what an edit changes besides its name. */
export interface ApiKeyTerms {
  access: ApiKeyAccess
  /** Null: every site of the account. */
  siteIds: readonly string[] | null
  /** The addresses and ranges it may be used from; null: any. */
  allowedAddresses: readonly string[] | null
  /** Null: never. */
  expiresAt: Date | null
}

/**
 * Whether `next` lets a key do anything `current` does not: full access where it read only, a
 * site it did not reach (or all of them), an address it could not be used from (or any), or a
 * later expiry (or none). A widening is confirmed as a key's making is; a narrowing, any
 * credential that may use the key may make.
 */
export function widensApiKey(current: ApiKeyTerms, next: ApiKeyTerms): boolean {
  if (current.access === 'read' && next.access === 'full') return true
  if (current.siteIds !== null && (next.siteIds === null || next.siteIds.some((id) => !current.siteIds?.includes(id)))) return true
  if (widensAddressList(current.allowedAddresses, next.allowedAddresses)) return true
  if (current.expiresAt !== null && (next.expiresAt === null || next.expiresAt.getTime() > current.expiresAt.getTime())) return true
  return false
}

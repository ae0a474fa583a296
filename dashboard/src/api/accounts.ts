import { request } from './client.js'
import type { Account, Session } from './types.js'

export interface Credentials {
  email: string
  password: string
}

/**
 * The account this browser is logged in to, or null. Not GET /me: browsers log its 401 as an error
 * in the console, which every opening of the dashboard logged out would show.
 */
export async function fetchCurrentAccount(): Promise<Account | null> {
  return (await request<{ account: Account | null }>('/sessions/current')).account
}

export interface SignUpStatus {
  /** Whether this server takes sign-ups now (its SIGNUPS setting). */
  open: boolean
  /** Whether a sign-up needs the setup code the server logs at start (SIGNUPS=first: its first account). */
  setupCodeRequired: boolean
}

export function fetchSignUpStatus(): Promise<SignUpStatus> {
  return request<SignUpStatus>('/sign-up')
}

export function createAccount(credentials: Credentials & { setupCode?: string }): Promise<Account> {
  return request<Account>('/accounts', { method: 'POST', body: credentials })
}

/**
 * `code` is the second factor of an account with two-factor authentication on (an authenticator
 * code or a recovery code). Without it such an account's log-in answers 401 two_factor_required,
 * and with a wrong one 401 two_factor_invalid; other accounts' log-ins ignore it.
 */
export function logIn(credentials: Credentials & { code?: string }): Promise<Account> {
  return request<Account>('/sessions', { method: 'POST', body: credentials, isQuietOnUnauthorized: true })
}

export async function logOut(): Promise<void> {
  await request<unknown>('/sessions', { method: 'DELETE', isQuietOnUnauthorized: true })
}

/**
 * Ends the account's other sessions; this one stays. `code` (an authenticator code or an unused
 * recovery code, which it uses up) is asked for while two-factor authentication is on: without it
 * a 400 on the field code; other accounts' changes ignore it.
 */
export async function changePassword(currentPassword: string, newPassword: string, code?: string): Promise<void> {
  await request<unknown>('/me/password', { method: 'PUT', body: { currentPassword, newPassword, code } })
}

/** The account's live sessions, the most recently used first. */
export async function listSessions(): Promise<Session[]> {
  return (await request<{ items: Session[] }>('/sessions')).items
}

/** Ends one session of the account. */
export async function endSession(id: string): Promise<void> {
  await request<unknown>(`/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' })
}

/** Ends the account's other sessions; answers how many ended. */
export async function logOutOtherSessions(): Promise<number> {
  return (await request<{ endedSessions: number }>('/sessions/others', { method: 'DELETE' })).endedSessions
}

/** Deletes the account and everything of it; the session ends with it. `code` as for changePassword. */
export async function deleteAccount(password: string, code?: string): Promise<void> {
  await request<unknown>('/me', { method: 'DELETE', body: { password, code } })
}

import { request } from './client.js'
import type { AccountVerificationPage, Stats, SurgeStatus, VerificationAction, VerificationPage } from './types.js'

export function fetchStats(siteId: string, range: { from: string; to: string; interval: 'hour' | 'day' }): Promise<Stats> {
  return request<Stats>(`/sites/${encodeURIComponent(siteId)}/stats`, { query: range })
}

export function fetchSurge(siteId: string): Promise<SurgeStatus> {
  return request<SurgeStatus>(`/sites/${encodeURIComponent(siteId)}/surge`)
}

export function fetchVerifications(
  siteId: string,
  query: { limit: number; cursor?: string; action?: VerificationAction; reference?: string; device?: string },
): Promise<VerificationPage> {
  return request<VerificationPage>(`/sites/${encodeURIComponent(siteId)}/verifications`, { query })
}

/** The verifications of any of the account's sites whose reference begins with `reference`, newest first. */
export function findReference(query: { reference: string; limit: number }): Promise<AccountVerificationPage> {
  return request<AccountVerificationPage>('/verifications', { query })
}

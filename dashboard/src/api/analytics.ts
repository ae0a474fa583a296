import { request } from './client.js'
import type { AccountVerificationPage, LabelChoice, ListDecision, Stats, SurgeStatus, VerificationAction, VerificationLabel, VerificationPage } from './types.js'

export function fetchStats(siteId: string, range: { from: string; to: string; interval: 'hour' | 'day' }): Promise<Stats> {
  return request<Stats>(`/sites/${encodeURIComponent(siteId)}/stats`, { query: range })
}

export function fetchSurge(siteId: string): Promise<SurgeStatus> {
  return request<SurgeStatus>(`/sites/${encodeURIComponent(siteId)}/surge`)
}

export function fetchVerifications(
  siteId: string,
  query: {
    limit: number
    cursor?: string
    action?: VerificationAction
    reference?: string
    device?: string
    label?: VerificationLabel | 'none'
    /** Siteverify's metadata.verification_id: the scored row it names (exact). */
    verificationId?: string
    /** The site's list that decided the rows instead of the risk model. */
    decidedBy?: ListDecision
  },
): Promise<VerificationPage> {
  return request<VerificationPage>(`/sites/${encodeURIComponent(siteId)}/verifications`, { query })
}

/** The verifications of any of the account's sites whose reference begins with `reference`, newest first. */
export function findReference(query: { reference: string; limit: number }): Promise<AccountVerificationPage> {
  return request<AccountVerificationPage>('/verifications', { query })
}

const labelPath = (siteId: string, rowId: string) => `/sites/${encodeURIComponent(siteId)}/verifications/${encodeURIComponent(rowId)}/label`

/** Labels a row of the site's log (its id in the listing), replacing any label it had. */
export async function labelVerification(siteId: string, rowId: string, choice: LabelChoice): Promise<void> {
  await request<unknown>(labelPath(siteId, rowId), { method: 'PUT', body: choice })
}

export async function removeVerificationLabel(siteId: string, rowId: string): Promise<void> {
  await request<unknown>(labelPath(siteId, rowId), { method: 'DELETE' })
}

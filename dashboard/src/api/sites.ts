import { ApiRequestError, request, requestWithEtag } from './client.js'
import { readList } from './read-list.js'
import type { DeliveryOutcome, ListedSite, SecretRotation, Site, SiteUpdate, SiteWithSecret, WebhookDelivery, WebhookEvent } from './types.js'

const sitePath = (id: string) => `/sites/${encodeURIComponent(id)}`

export async function listSites(): Promise<Site[]> {
  return readList<Site>(await request<unknown>('/sites'))
}

/** A site shared with the account that its owner opens only to members with two-factor authentication on. */
export interface SiteRequiringTwoFactor {
  id: string
  name: string
}

/**
 * The sites with each one's last 24 hours, read for all of them in one query; and those shared
 * with the account that the list leaves out until it turns two-factor authentication on.
 */
export async function listSitesWithSummary(): Promise<{ sites: ListedSite[]; sitesRequiringTwoFactor: SiteRequiringTwoFactor[] }> {
  const body = await request<{ sitesRequiringTwoFactor?: SiteRequiringTwoFactor[] }>('/sites?include=summary')
  return { sites: readList<ListedSite>(body), sitesRequiringTwoFactor: body.sitesRequiringTwoFactor ?? [] }
}

export async function fetchSite(id: string): Promise<Site> {
  const { body, etag } = await requestWithEtag<Site>(sitePath(id))
  return { ...body, etag }
}

export function createSite(input: { name: string; domains: string[] }, idempotencyKey: string): Promise<SiteWithSecret> {
  return request<SiteWithSecret>('/sites', { method: 'POST', body: input, idempotencyKey })
}

/** With ifMatch (the ETag the site was read with), the save is refused if the site has changed since. */
export async function updateSite(id: string, update: SiteUpdate, ifMatch?: string): Promise<Site> {
  try {
    const { body, etag } = await requestWithEtag<Site>(sitePath(id), { method: 'PUT', body: update, ifMatch })
    return { ...body, etag }
  } catch (error) {
    if (!(error instanceof ApiRequestError) || error.code !== 'precondition_failed') throw error
    throw new ApiRequestError(
      error.status,
      error.code,
      'This site was changed elsewhere (in another tab or by an API client) after this page loaded, and your change was not saved. Reload the page to see the current values, then make your change again.',
      error.requestId,
      [],
    )
  }
}

export async function deleteSite(id: string): Promise<void> {
  await request<unknown>(sitePath(id), { method: 'DELETE' })
}

/** Without invalidateImmediately the replaced key keeps working for the service's grace period. */
export function rotateSiteSecret(id: string, invalidateImmediately: boolean): Promise<SecretRotation> {
  return request<SecretRotation>(`${sitePath(id)}/secret/rotate`, { method: 'POST', body: { invalidateImmediately } })
}

export async function endPreviousSecret(id: string): Promise<void> {
  await request<unknown>(`${sitePath(id)}/secret/previous`, { method: 'DELETE' })
}

/** The newest deliveries, of one outcome when `outcome` names one. */
export async function listWebhookDeliveries(id: string, outcome?: DeliveryOutcome): Promise<WebhookDelivery[]> {
  const query = outcome === undefined ? '' : `?outcome=${encodeURIComponent(outcome)}`
  return readList<WebhookDelivery>(await request<unknown>(`${sitePath(id)}/webhook-deliveries${query}`))
}

/** Sends a delivery's verification.blocked event again now, under its first id; answers the new delivery. */
export function redeliverWebhook(id: string, deliveryId: string): Promise<WebhookDelivery> {
  return request<WebhookDelivery>(`${sitePath(id)}/webhook-deliveries/${encodeURIComponent(deliveryId)}/redeliver`, { method: 'POST' })
}

export function sendTestWebhook(id: string, event: WebhookEvent): Promise<WebhookDelivery> {
  return request<WebhookDelivery>(`${sitePath(id)}/webhook/test?event=${encodeURIComponent(event)}`, { method: 'POST' })
}

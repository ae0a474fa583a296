import { request } from './client.js'
import { readList } from './read-list.js'
import type { SecretRotation, Site, SiteUpdate, SiteWithSecret, WebhookDelivery } from './types.js'

const sitePath = (id: string) => `/sites/${encodeURIComponent(id)}`

export async function listSites(): Promise<Site[]> {
  return readList<Site>(await request<unknown>('/sites'))
}

export function fetchSite(id: string): Promise<Site> {
  return request<Site>(sitePath(id))
}

export function createSite(input: { name: string; domains: string[] }): Promise<SiteWithSecret> {
  return request<SiteWithSecret>('/sites', { method: 'POST', body: input })
}

export function updateSite(id: string, update: SiteUpdate): Promise<Site> {
  return request<Site>(sitePath(id), { method: 'PUT', body: update })
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

export async function listWebhookDeliveries(id: string): Promise<WebhookDelivery[]> {
  return readList<WebhookDelivery>(await request<unknown>(`${sitePath(id)}/webhook-deliveries`))
}

export function sendTestWebhook(id: string): Promise<WebhookDelivery> {
  return request<WebhookDelivery>(`${sitePath(id)}/webhook/test`, { method: 'POST' })
}

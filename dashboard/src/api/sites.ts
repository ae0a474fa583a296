import { request } from './client.js'
import { readList } from './read-list.js'
import type { Site, SiteUpdate, SiteWithSecret, WebhookDelivery } from './types.js'

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

export async function rotateSiteSecret(id: string): Promise<string> {
  const answer = await request<{ secretKey: string }>(`${sitePath(id)}/secret/rotate`, { method: 'POST' })
  return answer.secretKey
}

export async function listWebhookDeliveries(id: string): Promise<WebhookDelivery[]> {
  return readList<WebhookDelivery>(await request<unknown>(`${sitePath(id)}/webhook-deliveries`))
}

export function sendTestWebhook(id: string): Promise<WebhookDelivery> {
  return request<WebhookDelivery>(`${sitePath(id)}/webhook/test`, { method: 'POST' })
}

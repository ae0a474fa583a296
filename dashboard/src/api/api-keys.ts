import { request } from './client.js'
import type { ApiKey, CreatedApiKey } from './types.js'
import { readList } from './read-list.js'

export async function listApiKeys(): Promise<ApiKey[]> {
  return readList<ApiKey>(await request<unknown>('/api-keys'))
}

export function createApiKey(name: string): Promise<CreatedApiKey> {
  return request<CreatedApiKey>('/api-keys', { method: 'POST', body: { name } })
}

export async function revokeApiKey(id: string): Promise<void> {
  await request<unknown>(`/api-keys/${encodeURIComponent(id)}`, { method: 'DELETE' })
}

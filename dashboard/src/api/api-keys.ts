import { request } from './client.js'
import type { ApiKey, ApiKeyAccess, CreatedApiKey } from './types.js'
import { readList } from './read-list.js'

export async function listApiKeys(): Promise<ApiKey[]> {
  return readList<ApiKey>(await request<unknown>('/api-keys'))
}

/**
 * A key to create, confirmed by the account's current password and, while two-factor
 * authentication is on, a code (an authenticator code or an unused recovery code, which it uses
 * up): without it a 400 on the field code.
 */
export interface NewApiKey {
  name: string
  access: ApiKeyAccess
  /** The only sites the key may reach (1 to 100 of the account's); null for all of them. */
  siteIds: string[] | null
  /** The only addresses and ranges the key may be used from (1 to 100); null for any address. */
  allowedAddresses: string[] | null
  /** ISO 8601, in the future; null for a key that does not expire. */
  expiresAt: string | null
  password: string
  code: string | undefined
}

export function createApiKey(key: NewApiKey): Promise<CreatedApiKey> {
  return request<CreatedApiKey>('/api-keys', { method: 'POST', body: key })
}

/**
 * What an edit changes (a field left out stays as it is); the password, and while two-factor
 * authentication is on a code, are asked for only when it widens the key (more access, more sites,
 * more addresses, a later expiry): without them such an edit is a 400 on the field password.
 */
export interface ApiKeyEdit {
  name?: string
  access?: ApiKeyAccess
  siteIds?: string[] | null
  allowedAddresses?: string[] | null
  expiresAt?: string | null
  password?: string
  code?: string | undefined
}

export function editApiKey(id: string, edit: ApiKeyEdit): Promise<ApiKey> {
  return request<ApiKey>(`/api-keys/${encodeURIComponent(id)}`, { method: 'PATCH', body: edit })
}

export async function revokeApiKey(id: string): Promise<void> {
  await request<unknown>(`/api-keys/${encodeURIComponent(id)}`, { method: 'DELETE' })
}

import type { App } from '../../src/app.js'
import { asBrowser, randomClientAddress, type TestAccount } from './dashboard-client.js'

export interface CreatedKey {
  id: string
  name: string
  key: string
  access: 'full' | 'read'
  siteIds: string[] | null
  expiresAt: string | null
}

/** Asks for a key as the owner's browser, with its password (and `payload`'s fields); the answer, unchecked. */
export function askForKey(app: App, owner: TestAccount, payload: object) {
  return app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: asBrowser(owner),
    payload: { name: 'made here', password: owner.password, ...payload },
    remoteAddress: randomClientAddress(),
  })
}

/** Creates a key as the owner's browser; throws unless it was made. */
export async function createKey(app: App, owner: TestAccount, payload: object): Promise<CreatedKey> {
  const response = await askForKey(app, owner, payload)
  if (response.statusCode !== 201) throw new Error(`API key creation answered ${response.statusCode}: ${response.body}`)
  return response.json<CreatedKey>()
}

/** A request made with the key as a bearer token, as a script would. */
export function withKey(app: App, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, key: string, payload?: object) {
  return app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(payload === undefined ? {} : { payload }) })
}

/** The error of an error answer. */
export const errorOf = (response: { json: () => unknown }) =>
  (response.json() as { error: { code: string; message: string; details?: { field?: string; message: string }[] } }).error

import {
  browserSupportsWebAuthn,
  startAuthentication,
  startRegistration,
  WebAuthnError,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser'
import { request } from './client.js'
import type { Account, Passkey } from './types.js'

/**
 * Whether this browser can make and use passkeys here: WebAuthn, in a secure context (HTTPS, or
 * localhost), on a host name. A passkey is bound to a domain, and browsers refuse an IP address
 * (http://127.0.0.1:3000) as one: open the dashboard at http://localhost:3000 instead.
 */
export function canUsePasskeys(): boolean {
  const host = window.location.hostname
  const isAddress = /^[\d.]+$/.test(host) || host.includes(':') || host.startsWith('[')
  return browserSupportsWebAuthn() && !isAddress
}

export async function listPasskeys(): Promise<Passkey[]> {
  return (await request<{ items: Passkey[] }>('/me/passkeys')).items
}

/**
 * Adds a passkey: the server's options, the browser's (and the authenticator's) new credential
 * for them, then the credential with the name, the password and a code of the second factor.
 */
export async function addPasskey(confirmation: { name: string; password: string; code: string | undefined }): Promise<Passkey> {
  const optionsJSON = await request<PublicKeyCredentialCreationOptionsJSON>('/me/passkeys/options', { method: 'POST', body: {} })
  const credential = await inBrowser(() => startRegistration({ optionsJSON }))
  return request<Passkey>('/me/passkeys', { method: 'POST', body: { ...confirmation, credential } })
}

export function renamePasskey(id: string, name: string): Promise<Passkey> {
  return request<Passkey>(`/me/passkeys/${encodeURIComponent(id)}`, { method: 'PUT', body: { name } })
}

export async function removePasskey(id: string, proof: { password: string; code: string | undefined }): Promise<void> {
  await request<unknown>(`/me/passkeys/${encodeURIComponent(id)}`, { method: 'DELETE', body: proof })
}

/** Logs in with a passkey this browser (or a phone near it) holds for this host: the account, its session cookie set. */
export async function logInWithPasskey(): Promise<Account> {
  const optionsJSON = await request<PublicKeyCredentialRequestOptionsJSON>('/sessions/passkey/options', { method: 'POST', body: {}, isQuietOnUnauthorized: true })
  const credential = await inBrowser(() => startAuthentication({ optionsJSON }))
  return request<Account>('/sessions/passkey', { method: 'POST', body: { credential }, isQuietOnUnauthorized: true })
}

/**
 * The browser's part, whose failures are said in words: the person closed its prompt or let it
 * time out (NotAllowedError, which the browser also gives for a passkey it does not hold), or the
 * authenticator holds this account's passkey already.
 */
async function inBrowser<T>(ceremony: () => Promise<T>): Promise<T> {
  try {
    return await ceremony()
  } catch (error) {
    const name = error instanceof WebAuthnError ? (error.cause as { name?: string } | undefined)?.name : error instanceof Error ? error.name : undefined
    if (error instanceof WebAuthnError && error.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') {
      throw new Error('This authenticator holds a passkey of this account already.')
    }
    if (name === 'NotAllowedError' || name === 'AbortError') throw new Error('No passkey was used: the browser\'s prompt was closed or timed out.')
    throw error
  }
}

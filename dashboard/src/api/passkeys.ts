import {
  browserSupportsWebAuthn,
  startAuthentication,
  startRegistration,
  WebAuthnError,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser'
import { ApiRequestError, request } from './client.js'
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

/** The account's passkeys, and how many it may hold (the server's limit). */
export function listPasskeys(): Promise<{ items: Passkey[]; limit: number }> {
  return request<{ items: Passkey[]; limit: number }>('/me/passkeys')
}

/** A credential the browser (and the authenticator) made for the server's options, and until when the server takes it. */
export interface NewPasskeyCredential {
  credential: unknown
  /** Date.now() after which its challenge has expired on the server (a margin taken off). */
  usableUntil: number
}

/** Time kept back from the challenge's life for the request that sends the answer. */
const CHALLENGE_MARGIN_MS = 15_000

/** The server's options, then the browser's prompt: the authenticator stores a new credential. */
export async function makePasskeyCredential(): Promise<NewPasskeyCredential> {
  const optionsJSON = await request<PublicKeyCredentialCreationOptionsJSON>('/me/passkeys/options', { method: 'POST', body: {} })
  const askedAt = Date.now()
  const credential = await inBrowser(() => startRegistration({ optionsJSON }))
  return { credential, usableUntil: askedAt + (optionsJSON.timeout ?? 5 * 60_000) - CHALLENGE_MARGIN_MS }
}

/** Adds the credential with the name, the password and a code of the second factor. */
export function addPasskey(credential: NewPasskeyCredential, confirmation: { name: string; password: string; code: string | undefined }): Promise<Passkey> {
  return request<Passkey>('/me/passkeys', { method: 'POST', body: { ...confirmation, credential: credential.credential } })
}

/**
 * Whether the server's refusal leaves the credential to send again: a 400 on the password, the
 * code or the name only (the server has not taken its challenge then). Any other answer (the
 * credential refused, a full list, too many tries) means a new prompt.
 */
export function isCredentialStillUsable(error: unknown): boolean {
  return (
    error instanceof ApiRequestError &&
    error.status === 400 &&
    error.details.length > 0 &&
    error.details.every((detail) => detail.field === 'password' || detail.field === 'code' || detail.field === 'name')
  )
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
  try {
    return await request<Account>('/sessions/passkey', { method: 'POST', body: { credential }, isQuietOnUnauthorized: true })
  } catch (error) {
    if (error instanceof ApiRequestError && error.code === 'passkey_unknown') signalUnknown(optionsJSON.rpId ?? window.location.hostname, credential.id)
    throw error
  }
}

interface SignalingPublicKeyCredential {
  signalUnknownCredential?: (options: { rpId: string; credentialId: string }) => Promise<void>
}

/**
 * Tells the browser's passkey manager that this server knows the passkey no more (removed, or
 * made for another server), where the browser can be told (signalUnknownCredential, feature-
 * detected): it may hide or delete it, so that it is not offered again.
 */
function signalUnknown(rpId: string, credentialId: string): void {
  const signaling = (typeof PublicKeyCredential === 'undefined' ? undefined : PublicKeyCredential) as SignalingPublicKeyCredential | undefined
  if (typeof signaling?.signalUnknownCredential !== 'function') return
  signaling.signalUnknownCredential({ rpId, credentialId }).catch(() => undefined)
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

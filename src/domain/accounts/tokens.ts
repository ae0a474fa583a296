import { createHash, randomBytes } from 'node:crypto'

const API_KEY_PREFIX = 'tgak_'
/** How much of a key the list shows: the marker plus 7 random characters, enough to tell keys apart. */
const VISIBLE_PREFIX_LENGTH = API_KEY_PREFIX.length + 7

/** A session cookie value: 256 random bits. */
export function generateSessionToken(): string {
  return randomBytes(32).toString('base64url')
}

/** An API key: a recognisable marker (for secret scanners) and 256 random bits. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url')
}

export function isApiKeyShaped(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX) && value.length === API_KEY_PREFIX.length + 43
}

export function prefixOfApiKey(apiKey: string): string {
  return apiKey.slice(0, VISIBLE_PREFIX_LENGTH)
}

/**
 * Session tokens and API keys are stored only as SHA-256. They carry 256 random bits, so a fast
 * hash cannot be reversed by guessing, and looking the hash up by equality in a unique index is
 * safe: timing can at most reveal bits of a hash, never of a token that hashes to it.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

/** The token of an `Authorization: Bearer <token>` header, or undefined for any other header. */
export function bearerTokenOf(authorization: string | undefined): string | undefined {
  return /^Bearer +(\S+)$/i.exec(authorization ?? '')?.[1]
}

const INVITATION_TOKEN_PREFIX = 'tgi_'

/**
 * The one-time token of an invitation to a site: a marker (for secret scanners, and so that a
 * key pasted in its place is told apart) and 256 random bits. Stored only as hashToken's digest.
 */
export function generateInvitationToken(): string {
  return INVITATION_TOKEN_PREFIX + randomBytes(32).toString('base64url')
}

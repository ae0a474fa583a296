import { hash, randomBytes } from 'node:crypto'
import { isSameInConstantTime } from '../mac.js'

/**
 * The characters of every site key: Tollgate's own (tgk_ and base64url), the documented test keys
 * (1x00000000000000000000AA) and the vendors' test keys they alias (reCAPTCHA's, hCaptcha's UUIDs).
 */
export const SITE_KEY_PATTERN = /^[A-Za-z0-9_-]+$/

/** Public site keys name a site in pages; they are not secret. */
export function generateSiteKey(): string {
  return `tgk_${randomBytes(16).toString('base64url')}`
}

/** Secret keys authenticate a site's backend to Siteverify; 256 random bits. */
export function generateSecretKey(): string {
  return `tgs_${randomBytes(32).toString('base64url')}`
}

/**
 * Secret keys are stored as SHA-256. A slow password hash is not needed (and would slow every
 * Siteverify): the input has 256 bits of entropy, so the hash cannot be reversed by guessing.
 */
export function hashSecretKey(secretKey: string): string {
  return secretKeyDigest(secretKey).toString('hex')
}

function secretKeyDigest(secretKey: string): Buffer {
  return hash('sha256', secretKey, 'buffer')
}

/** Constant-time check of a presented secret against the stored hash. */
export function isSecretKeyOf(secretKey: string, storedHash: string): boolean {
  const presented = secretKeyDigest(secretKey)
  const stored = Buffer.from(storedHash, 'hex')
  return isSameInConstantTime(stored, presented)
}

/** How long a rotated-out secret key keeps working unless the rotation ends it at once. */
export const PREVIOUS_SECRET_GRACE_MS = 2 * 60 * 60 * 1000

export interface SecretKeyHolder {
  secretKeyHash: string
  /** Keys replaced by rotations, newest first, each with the moment it stops. */
  previousSecrets: { keyHash: string; expiresAt: Date }[]
}

/**
 * Whether a presented secret is the site's: its current secret key, or one a rotation replaced
 * until that one's grace period ends (so a backend can deploy the new key without failed calls).
 */
export function acceptsSecretKey(site: SecretKeyHolder, secretKey: string, now: number): boolean {
  if (isSecretKeyOf(secretKey, site.secretKeyHash)) return true
  return livePreviousSecrets(site, now).some((previous) => isSecretKeyOf(secretKey, previous.keyHash))
}

/**
 * The site a presented secret key opens now (its current key, or a replaced one in its grace
 * period), looked up by the key's hash in `sites`; undefined for any other key. For the calls
 * that carry a secret and no token to name the site by (Siteverify's feedback, createAssessment).
 */
export async function siteOpenedBy<S extends SecretKeyHolder>(
  sites: { findBySecretKeyHash: (secretKeyHash: string) => Promise<S | undefined> },
  secretKey: string,
  now: number,
): Promise<S | undefined> {
  const site = await sites.findBySecretKeyHash(hashSecretKey(secretKey))
  return site !== undefined && acceptsSecretKey(site, secretKey, now) ? site : undefined
}

/**
 * Whether a presented secret is one a rotation replaced, its grace period over or not: a backend
 * that was not told of the rotation. Only someone who held that secret can send it.
 */
export function isReplacedSecretKey(site: Pick<SecretKeyHolder, 'previousSecrets'>, secretKey: string): boolean {
  return site.previousSecrets.some((previous) => isSecretKeyOf(secretKey, previous.keyHash))
}

/** The replaced keys whose grace period lasts, newest first. */
export function livePreviousSecrets(site: Pick<SecretKeyHolder, 'previousSecrets'>, now: number): SecretKeyHolder['previousSecrets'] {
  return site.previousSecrets.filter((previous) => now < previous.expiresAt.getTime())
}

/** When the last of the replaced keys stops working, or null when none works any more. */
export function previousSecretsEnd(site: Pick<SecretKeyHolder, 'previousSecrets'>, now: number): Date | null {
  const ends = livePreviousSecrets(site, now).map((previous) => previous.expiresAt.getTime())
  return ends.length === 0 ? null : new Date(Math.max(...ends))
}

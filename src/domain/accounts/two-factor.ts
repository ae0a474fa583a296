import { createHash, randomInt } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'
import { decryptSecret, encryptSecret } from '../secret-box.js'

/**
 * Two-factor authentication with an authenticator app: TOTP (RFC 6238) with the parameters every
 * app takes from a QR code (HMAC-SHA1, six digits, 30-second steps), and one-time recovery codes.
 */
const TOTP_PERIOD_SECONDS = 30
const TOTP_DIGITS = 6
const ISSUER = 'Tollgate'
/** 160 bits, the length RFC 4226 recommends and the apps expect. */
const SECRET_BYTES = 20
/** A code of the step before or after the current one is accepted too: phones' clocks drift. */
const ACCEPTED_STEPS_AROUND_NOW = 1

/** How long a started setup may take before its code is confirmed. */
export const SETUP_LIFETIME_MS = 15 * 60_000

export const RECOVERY_CODE_COUNT = 10
/** Crockford's base32 in lower case: no i, l, o or u, which read like other characters. */
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'
const RECOVERY_GROUPS = 3
const RECOVERY_GROUP_LENGTH = 4

function totpOf(secretBase32: string, label = ''): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label,
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    secret: Secret.fromBase32(secretBase32),
  })
}

/** A new shared secret for an authenticator app, in base32 (32 characters). */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32
}

/** The otpauth:// address an authenticator app reads from a QR code. */
export function otpauthUriOf(secretBase32: string, accountEmail: string): string {
  return totpOf(secretBase32, accountEmail).toString()
}

/** The time step a moment falls in. */
export function totpStepAt(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP_PERIOD_SECONDS)
}

/** Whether an entered code has the shape of an authenticator's (six digits, a space in the middle allowed). */
export function isTotpShaped(code: string): boolean {
  return /^\d{3} ?\d{3}$/.test(code.trim())
}

/**
 * The time step whose code `code` is, within one step of now, or undefined when it is none of
 * them. The caller refuses a step not after the last one accepted (a replay).
 */
export function matchingTotpStep(secretBase32: string, code: string, nowMs: number = Date.now()): number | undefined {
  if (!isTotpShaped(code)) return undefined
  const delta = totpOf(secretBase32).validate({ token: code.replace(/\s/g, ''), timestamp: nowMs, window: ACCEPTED_STEPS_AROUND_NOW })
  return delta === null ? undefined : totpStepAt(nowMs) + delta
}

/** A fresh set of recovery codes, as shown to the account's owner once: `k7m2-x9q4-r3tz`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () =>
    Array.from({ length: RECOVERY_GROUPS }, () => Array.from({ length: RECOVERY_GROUP_LENGTH }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join('')).join('-'),
  )
}

/**
 * A recovery code as entered, in the form it is hashed in, or undefined when it cannot be one:
 * letter case, spaces and dashes do not matter, and the letters people read for digits (o, i, l)
 * count as those digits.
 */
export function normalizeRecoveryCode(entered: string): string | undefined {
  const code = entered.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1')
  const length = RECOVERY_GROUPS * RECOVERY_GROUP_LENGTH
  if (code.length !== length || [...code].some((character) => !RECOVERY_ALPHABET.includes(character))) return undefined
  return code
}

/**
 * What is stored of a recovery code: its SHA-256. A code carries 60 random bits, so a fast hash
 * cannot be reversed by guessing, and it is looked up by equality in the primary key.
 */
export function hashRecoveryCode(normalized: string): string {
  return createHash('sha256').update(`tollgate recovery code:${normalized}`, 'utf8').digest('hex')
}

/** The account's TOTP secret sealed for the database, bound to the account. */
export function sealTotpSecret(key: Buffer, accountId: string, secretBase32: string): string {
  return encryptSecret(key, secretBase32, `totp:${accountId}`)
}

export function openTotpSecret(key: Buffer, accountId: string, sealed: string): string {
  return decryptSecret(key, sealed, `totp:${accountId}`)
}

/**
 * A setup under way, held by the browser until its first code is confirmed: the new secret and
 * when the setup ends, sealed for this account only, so nothing is stored before two-factor is on
 * and a setup cannot be confirmed for another account.
 */
export function sealSetup(key: Buffer, accountId: string, secretBase32: string, nowMs: number): string {
  return encryptSecret(key, JSON.stringify({ secret: secretBase32, expiresAt: nowMs + SETUP_LIFETIME_MS }), `totp-setup:${accountId}`)
}

/** The secret of a setup token, or why there is none: expired, or invalid (changed, another account's, or another server secret's). */
export function openSetup(key: Buffer, accountId: string, token: string, nowMs: number): { secret: string } | { problem: 'expired' | 'invalid' } {
  let setup: unknown
  try {
    setup = JSON.parse(decryptSecret(key, token, `totp-setup:${accountId}`))
  } catch {
    return { problem: 'invalid' }
  }
  const { secret, expiresAt } = (typeof setup === 'object' && setup !== null ? setup : {}) as { secret?: unknown; expiresAt?: unknown }
  if (typeof secret !== 'string' || typeof expiresAt !== 'number') return { problem: 'invalid' }
  return nowMs > expiresAt ? { problem: 'expired' } : { secret }
}

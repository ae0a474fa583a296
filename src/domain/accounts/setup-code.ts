import type { KeyRing } from '../../secret.js'
import { hmacSha256, isSameInConstantTime } from '../mac.js'

/** Crockford's base32: no I, L, O or U, so that a code read off a log and typed is not misread. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/**
 * The code the first account's sign-up needs under SIGNUPS=first (the production default): until
 * an account exists, anyone who reached a fresh instance first could otherwise take it. Derived
 * from the server secret and the number of accounts ever created (`accountsCreated`), so every
 * instance prints the same code, none is stored, and a code is void once an account has been
 * made: a server whose accounts were all deleted asks for a new one. 80 bits, as
 * XXXX-XXXX-XXXX-XXXX.
 */
export function firstAccountSetupCode(keyRing: KeyRing, accountsCreated: number): string {
  const round = accountsCreated === 0 ? '' : ` after ${accountsCreated}`
  const bytes = hmacSha256(keyRing.keyFor('setup-code'), `tollgate first account setup code v1${round}`).subarray(0, 10)
  let bits = 0n
  for (const byte of bytes) bits = (bits << 8n) | BigInt(byte)
  let code = ''
  for (let index = 15; index >= 0; index -= 1) code += ALPHABET[Number((bits >> BigInt(index * 5)) & 31n)]
  return code.match(/.{4}/g)!.join('-')
}

/** Whether `presented` is the setup code, in any letter case, with or without its dashes and spaces. */
export function isFirstAccountSetupCode(keyRing: KeyRing, accountsCreated: number, presented: string): boolean {
  const canonical = (code: string) => Buffer.from(code.toUpperCase().replace(/[\s-]/g, ''), 'utf8')
  return isSameInConstantTime(canonical(firstAccountSetupCode(keyRing, accountsCreated)), canonical(presented))
}

import { randomBytes } from 'node:crypto'
import { hash, verify } from '@node-rs/argon2'

/** Long enough to resist guessing; the maximum bounds the work one request can demand of Argon2. */
export const PASSWORD_MIN_LENGTH = 10
export const PASSWORD_MAX_LENGTH = 256

/**
 * Why a password cannot be chosen, in words for its field's error, or undefined. Lengths count
 * characters (Unicode code points, as NIST SP 800-63B asks), not UTF-16 units: five emoji are
 * five characters, not ten.
 */
export function findPasswordProblem(password: string): string | undefined {
  const length = [...password].length
  if (length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`
  if (length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`
  // A password field cannot hold a line break: such a password could never be typed to log in.
  if (/\p{Cc}/u.test(password)) return 'must not contain line breaks or other control characters'
  return undefined
}

/**
 * Argon2id with the library's defaults (19 MiB, 2 passes, 1 lane), which are OWASP's
 * recommended minimum; the parameters travel inside the PHC string, so raising them later
 * keeps old hashes verifiable.
 */
export function hashPassword(password: string): Promise<string> {
  return hash(password)
}

let dummyHash: Promise<string> | undefined

/** A hash of a random password with the same parameters as real ones, made once per process. */
function readDummyHash(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(24).toString('base64url'))
  return dummyHash
}

/**
 * Whether `password` matches `storedHash`. With no stored hash (an unknown e-mail address) the
 * password is still checked, against a dummy hash, so that the answer takes as long as a wrong
 * password and response times do not tell which addresses have accounts.
 */
export async function isPasswordCorrect(storedHash: string | undefined, password: string): Promise<boolean> {
  if (storedHash === undefined) {
    await verify(await readDummyHash(), password)
    return false
  }
  try {
    return await verify(storedHash, password)
  } catch {
    // A corrupt stored hash is a data problem, not a reason to let anyone in.
    return false
  }
}

import { randomBytes } from 'node:crypto'
import { hash, verify, type Algorithm } from '@node-rs/argon2'
import { dictionary } from '@zxcvbn-ts/language-common'

/** Long enough to resist guessing; the maximum bounds the work one request can demand of Argon2. */
export const PASSWORD_MIN_LENGTH = 10
export const PASSWORD_MAX_LENGTH = 256

/** What a new password must be, in one sentence for the API's description of its field (the dashboard's hint says it in its own words: dashboard/src/lib/password-rules.ts). */
export const PASSWORD_RULES =
  `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters; not a common password (such as password123 or 1234567890), ` +
  'not one character repeated, and not containing your e-mail address or the part before its @'

/**
 * The 49,000 passwords leaked most often (zxcvbn's common-passwords list, shipped with the package,
 * so nothing leaves the server), lowercased: NIST SP 800-63B asks that a new password be checked
 * against passwords known to be common or breached. Built on first use.
 */
let commonPasswords: Set<string> | undefined

function isCommonPassword(password: string): boolean {
  commonPasswords ??= new Set(dictionary['passwords-common'].map((word) => word.toLowerCase()))
  return commonPasswords.has(password.toLowerCase())
}

/** The parts of the account's address a password must not contain: the address, and its local part when that is long enough to mean something. */
function addressPartsOf(email: string): string[] {
  const address = email.toLowerCase()
  const local = address.slice(0, Math.max(0, address.lastIndexOf('@')))
  return [address, ...([...local].length >= 4 ? [local] : [])]
}

/**
 * Why a password cannot be chosen for the account of `email`, in words for its field's error, or
 * undefined. Lengths count characters (Unicode code points, as NIST SP 800-63B asks), not UTF-16
 * units: five emoji are five characters, not ten. Beyond the lengths, what NIST asks be refused
 * (and the dashboard's hint tells, PASSWORD_RULES): a common or breached password (an exact match,
 * whatever the letter case), one character repeated, and one containing the account's e-mail
 * address or the part of it before the @ (four characters or more). Checked when a password is
 * chosen only: an existing account whose password breaks a rule added since still logs in.
 */
export function findPasswordProblem(password: string, email: string): string | undefined {
  const characters = [...password]
  const length = characters.length
  if (length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`
  if (length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`
  // A password field cannot hold a line break: such a password could never be typed to log in.
  if (/\p{Cc}/u.test(password)) return 'must not contain line breaks or other control characters'
  if (characters.every((character) => character === characters[0])) return 'must not be one character repeated'
  if (isCommonPassword(password)) return 'is too common: it is among the passwords guessed first (a few unrelated words, or a password manager\'s, are not)'
  const lowered = password.toLowerCase()
  if (addressPartsOf(email).some((part) => lowered.includes(part))) return 'must not contain your e-mail address or the part before its @'
  return undefined
}

/** Algorithm.Argon2id: the library's enum is a const enum, which isolated modules cannot read. */
const ARGON2ID = 2 as Algorithm.Argon2id

/**
 * Argon2id at 19 MiB, 2 passes and 1 lane: OWASP's recommended minimum, and the library's defaults
 * that every earlier hash was made with. Named here so that a change of the library's defaults
 * changes nothing unseen; the parameters travel inside the PHC string, so raising them later keeps
 * old hashes verifiable.
 */
export const ARGON2_PARAMETERS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_PARAMETERS)
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

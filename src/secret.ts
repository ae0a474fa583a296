import { createSecretKey, hash, hkdfSync, randomBytes, type KeyObject } from 'node:crypto'
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { MIN_SECRET_LENGTH, type Config } from './config.js'
import { hmacSha256 } from './domain/mac.js'
import { StartupError } from './startup-error.js'

/** Purposes of the keys derived from TOLLGATE_SECRET; each gets an independent key. */
export type KeyPurpose = 'challenge' | 'token' | 'ephemeral-id' | 'webhook-encryption' | 'site-secret' | 'session' | 'device' | 'key-check' | 'setup-code' | 'gate' | 'two-factor' | 'idempotency-hash' | 'idempotency-answer'

export interface KeyRing {
  /** A 32-byte key for one purpose, derived with HKDF-SHA256 so that keys never share material. */
  keyFor(purpose: KeyPurpose): Buffer
  /**
   * The same key as a KeyObject, for HMACs on the request path: createHmac imports a raw key at
   * every call, which costs more than hashing a short message (about 3.7 against 2.3 µs per HMAC).
   */
  macKeyFor(purpose: KeyPurpose): KeyObject
}

export function createKeyRing(secret: string): KeyRing {
  const material = Buffer.from(secret, 'utf8')
  const salt = hash('sha256', 'tollgate key ring v1', 'buffer')
  // Each purpose's key, derived once, with its KeyObject.
  const derived = new Map<KeyPurpose, { key: Buffer; macKey: KeyObject }>()
  const derive = (purpose: KeyPurpose) => {
    let entry = derived.get(purpose)
    if (entry === undefined) {
      const key = Buffer.from(hkdfSync('sha256', material, salt, `tollgate:${purpose}`, 32))
      entry = { key, macKey: createSecretKey(key) }
      derived.set(purpose, entry)
    }
    return entry
  }
  return {
    keyFor: (purpose) => derive(purpose).key,
    macKeyFor: (purpose) => derive(purpose).macKey,
  }
}

/**
 * What the database keeps to recognise the secret (migration 012): an HMAC of a fixed text under
 * the key-check key, which tells nothing of the secret or of the keys of other purposes.
 */
export function keyCheckOf(keyRing: KeyRing): string {
  return hmacSha256(keyRing.keyFor('key-check'), 'tollgate server key check v1').toString('base64url')
}

/**
 * TOLLGATE_SECRET when set; otherwise (development and test only, config refuses production)
 * a random secret generated once and kept in DATA_DIR, so tokens survive restarts. The file
 * appears whole or not at all (written aside, then linked into place, which fails if another
 * process got there first), and a stored secret too short to be one (an empty file, say) stops
 * the start: every installation would otherwise derive the same keys from it.
 */
export async function resolveSecret(config: Pick<Config, 'secret' | 'dataDirectory'>): Promise<string> {
  if (config.secret !== undefined) return config.secret
  const file = storedSecretFile(config.dataDirectory)
  const stored = await readStoredSecret(file)
  if (stored !== undefined) return stored
  await mkdir(config.dataDirectory, { recursive: true, mode: 0o700 })
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
  await writeFile(draft, randomBytes(32).toString('base64url') + '\n', { mode: 0o600, flag: 'wx' })
  try {
    await link(draft, file).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error
    })
  } finally {
    await unlink(draft).catch(() => undefined)
  }
  const secret = await readStoredSecret(file)
  if (secret === undefined) throw new StartupError(`the secret file ${file} disappeared while it was being created`)
  return secret
}

/** TOLLGATE_SECRET, else the one kept in DATA_DIR, without generating one (undefined when there is none). */
export async function findSecret(config: Pick<Config, 'secret' | 'dataDirectory'>): Promise<string | undefined> {
  return config.secret ?? readStoredSecret(storedSecretFile(config.dataDirectory))
}

/** Where the secret is kept when TOLLGATE_SECRET is unset. */
export function storedSecretFile(dataDirectory: string): string {
  return join(dataDirectory, 'secret')
}

async function readStoredSecret(file: string): Promise<string | undefined> {
  let secret: string
  try {
    secret = (await readFile(file, 'utf8')).trim()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new StartupError(
      `the secret file ${file} holds ${secret.length} characters, fewer than ${MIN_SECRET_LENGTH}: ` +
        'delete it to have a new one generated (tokens and sessions issued with the old one stop working), or set TOLLGATE_SECRET',
    )
  }
  return secret
}

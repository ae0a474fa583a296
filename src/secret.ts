import { createHash, hkdfSync, randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Config } from './config.js'

/** Purposes of the keys derived from TOLLGATE_SECRET; each gets an independent key. */
export type KeyPurpose = 'challenge' | 'token' | 'webhook-encryption' | 'site-secret' | 'session'

export interface KeyRing {
  /** A 32-byte key for one purpose, derived with HKDF-SHA256 so that keys never share material. */
  keyFor(purpose: KeyPurpose): Buffer
}

export function createKeyRing(secret: string): KeyRing {
  const material = Buffer.from(secret, 'utf8')
  const salt = createHash('sha256').update('tollgate key ring v1').digest()
  const cache = new Map<KeyPurpose, Buffer>()
  return {
    keyFor(purpose) {
      let key = cache.get(purpose)
      if (key === undefined) {
        key = Buffer.from(hkdfSync('sha256', material, salt, `tollgate:${purpose}`, 32))
        cache.set(purpose, key)
      }
      return key
    },
  }
}

/**
 * TOLLGATE_SECRET when set; otherwise (development and test only, config refuses production)
 * a random secret generated once and kept in DATA_DIR, so tokens survive restarts.
 */
export async function resolveSecret(config: Pick<Config, 'secret' | 'dataDirectory'>): Promise<string> {
  if (config.secret !== undefined) return config.secret
  const file = join(config.dataDirectory, 'secret')
  try {
    return (await readFile(file, 'utf8')).trim()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  await mkdir(config.dataDirectory, { recursive: true })
  const secret = randomBytes(32).toString('base64url')
  await writeFile(file, secret + '\n', { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error
  })
  return (await readFile(file, 'utf8')).trim()
}

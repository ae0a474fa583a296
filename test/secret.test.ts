import { createHmac } from 'node:crypto'
import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createKeyRing, resolveSecret } from '../src/secret.js'
import { StartupError } from '../src/startup-error.js'

const secret = 'a-test-secret-of-at-least-thirty-two-characters'

describe('createKeyRing', () => {
  it('derives a distinct 32-byte key per purpose, the same for the same secret', () => {
    const ring = createKeyRing(secret)
    const challenge = ring.keyFor('challenge')
    expect(challenge).toHaveLength(32)
    expect(ring.keyFor('token').equals(challenge)).toBe(false)
    expect(createKeyRing(secret).keyFor('challenge').equals(challenge)).toBe(true)
    expect(createKeyRing(`${secret}!`).keyFor('challenge').equals(challenge)).toBe(false)
  })

  it('gives the MAC key of a purpose as a KeyObject of the same bytes', () => {
    const ring = createKeyRing(secret)
    const macKey = ring.macKeyFor('token')
    expect(macKey.type).toBe('secret')
    expect(macKey.export().equals(ring.keyFor('token'))).toBe(true)
    expect(createHmac('sha256', macKey).update('text').digest('hex')).toBe(createHmac('sha256', ring.keyFor('token')).update('text').digest('hex'))
    expect(ring.macKeyFor('token')).toBe(macKey)
  })
})

describe('resolveSecret without TOLLGATE_SECRET (development)', () => {
  const freshDirectory = () => mkdtemp(join(tmpdir(), 'tollgate-secret-'))

  it('generates a secret once, keeps it in DATA_DIR (owner-only) and reads it back; racing starts get the same one', async () => {
    const dataDirectory = join(await freshDirectory(), 'data')
    const secrets = await Promise.all(Array.from({ length: 5 }, () => resolveSecret({ secret: undefined, dataDirectory })))
    expect(new Set(secrets).size).toBe(1)
    expect(secrets[0]?.length).toBeGreaterThanOrEqual(32)
    expect(await resolveSecret({ secret: undefined, dataDirectory })).toBe(secrets[0])
    expect((await readFile(join(dataDirectory, 'secret'), 'utf8')).trim()).toBe(secrets[0])
    expect((await stat(join(dataDirectory, 'secret'))).mode & 0o777).toBe(0o600)
    // Nothing is left beside it.
    expect(await readdir(dataDirectory)).toEqual(['secret'])
  })

  it('refuses a stored secret too short to be one (an empty file from an interrupted first start), naming the file', async () => {
    for (const content of ['', '\n', 'short']) {
      const dataDirectory = await freshDirectory()
      await writeFile(join(dataDirectory, 'secret'), content)
      const failure = resolveSecret({ secret: undefined, dataDirectory })
      await expect(failure).rejects.toBeInstanceOf(StartupError)
      await expect(failure).rejects.toThrow(`the secret file ${join(dataDirectory, 'secret')} holds`)
    }
  })

  it('uses TOLLGATE_SECRET when set, whatever DATA_DIR holds', async () => {
    const dataDirectory = await freshDirectory()
    await writeFile(join(dataDirectory, 'secret'), '')
    expect(await resolveSecret({ secret, dataDirectory })).toBe(secret)
  })
})

import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { encryptSecret } from '../../src/domain/secret-box.js'
import { createKeyRing, type KeyRing } from '../../src/secret.js'
import type { SqlDatabase } from '../../src/storage/ports.js'
import { checkServerSecret, refuseToGenerateSecret } from '../../src/storage/sql/server-key-check.js'
import { createSiteRepository } from '../../src/storage/sql/site-repository.js'
import { openTestDatabase, type TestDatabase } from '../helpers/storage.js'

const newKeyRing = () => createKeyRing(randomBytes(36).toString('base64url'))

/**
 * A database a development start recorded its secret in, with one site whose webhook secret was
 * replaced under that secret: the replaced one sealed and still signing until `previousExpiresIn`
 * from now (negative: expired, not yet swept), the current one cleared.
 */
async function siteWithOnlyAReplacedSecret(database: SqlDatabase, development: KeyRing, previousExpiresIn: string): Promise<void> {
  expect(await checkServerSecret(database, development, 'development')).toBe('recorded')
  const { site } = await createSiteRepository(database).create({ accountId: null, name: 'Shop' })
  await database.query(
    `UPDATE sites SET previous_webhook_secret_ciphertext = $2, previous_webhook_secret_expires_at = now() + $3::interval WHERE id = $1`,
    [site.id, encryptSecret(development.keyFor('webhook-encryption'), 'whsec_replaced', site.id), previousExpiresIn],
  )
}

describe('the start-up checks count a replaced webhook secret while it still signs', () => {
  let opened: TestDatabase
  beforeEach(async () => {
    opened = await openTestDatabase('pglite')
  })
  afterEach(async () => {
    await opened.database.close()
    await opened.dispose()
  })

  it('refuses a production start with another secret while the replaced secret is sealed under the recorded one', async () => {
    const development = newKeyRing()
    await siteWithOnlyAReplacedSecret(opened.database, development, '1 hour')
    await expect(checkServerSecret(opened.database, newKeyRing(), 'production')).rejects.toThrow(
      "1 site(s)' webhook secret(s) and 0 account(s)' authenticator secret(s) (two-factor) are sealed under that one",
    )
    // Nothing was replaced: the development secret still opens the database.
    expect(await checkServerSecret(opened.database, development, 'development')).toBe('matches')
  })

  it('lets a production start replace the recorded secret once the replaced one has expired', async () => {
    await siteWithOnlyAReplacedSecret(opened.database, newKeyRing(), '-1 minute')
    expect(await checkServerSecret(opened.database, newKeyRing(), 'production')).toBe('replaced')
  })

  it('refuses to generate a secret while a replaced one still signs, not once it has expired', async () => {
    await siteWithOnlyAReplacedSecret(opened.database, newKeyRing(), '1 hour')
    await expect(refuseToGenerateSecret(opened.database, '/data/secret')).rejects.toThrow("holds 1 site(s)' webhook secret(s)")
    await opened.database.execute("UPDATE sites SET previous_webhook_secret_expires_at = now() - interval '1 minute'")
    await expect(refuseToGenerateSecret(opened.database, '/data/secret')).resolves.toBeUndefined()
  })

  it('gives a command that writes a new secret file even where DATA_DIR does not exist yet', async () => {
    await siteWithOnlyAReplacedSecret(opened.database, newKeyRing(), '1 hour')
    const secretFile = join(mkdtempSync(join(tmpdir(), 'tollgate-key-check-')), 'data', 'secret')
    const message = await refuseToGenerateSecret(opened.database, secretFile).then(
      () => '',
      (error: Error) => error.message,
    )
    const command = /write a new one to the file \(`(.+?)`\)/.exec(message)?.[1]
    expect(command).toBeDefined()
    execFileSync('bash', ['-c', command!])
    expect(existsSync(secretFile)).toBe(true)
    expect(readFileSync(secretFile, 'utf8')).toMatch(/^[A-Za-z0-9+/]{64}$/)
  })
})

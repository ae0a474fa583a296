import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { resolveSecret } from '../../src/secret.js'
import { openDatabase } from '../../src/storage/open-storage.js'

/**
 * The embedded database holds password hashes and e-mail addresses, and PGlite writes its files
 * for every user of the machine to read: its directory must let no one else in.
 */
const parent = mkdtempSync(join(tmpdir(), 'tollgate-permissions-'))
afterAll(() => rmSync(parent, { recursive: true, force: true }))

const modeOf = (path: string) => statSync(path).mode & 0o777

describe('DATA_DIR on the embedded stores', () => {
  it("is made for its owner alone, database and secret included, whatever the umask lets through", async () => {
    const dataDirectory = join(parent, 'fresh')
    const previous = process.umask(0o000)
    try {
      await resolveSecret({ secret: undefined, dataDirectory })
      const database = await openDatabase({ dataDirectory, databaseUrl: undefined })
      await database.close()
    } finally {
      process.umask(previous)
    }
    expect(modeOf(dataDirectory)).toBe(0o700)
    expect(modeOf(join(dataDirectory, 'pglite'))).toBe(0o700)
    expect(modeOf(join(dataDirectory, 'secret'))).toBe(0o600)
  }, 60_000)

  it('closes a database directory made open before (an earlier version, or a restored backup) at start', async () => {
    const dataDirectory = join(parent, 'earlier')
    mkdirSync(join(dataDirectory, 'pglite'), { recursive: true })
    chmodSync(join(dataDirectory, 'pglite'), 0o755)
    const database = await openDatabase({ dataDirectory, databaseUrl: undefined })
    await database.close()
    expect(modeOf(join(dataDirectory, 'pglite'))).toBe(0o700)
  }, 60_000)

  it.runIf(process.getuid?.() === 0)('keeps another local user from reading any of the database\'s files', async () => {
    const dataDirectory = join(parent, 'shared-host')
    const database = await openDatabase({ dataDirectory, databaseUrl: undefined })
    await database.query('CREATE TABLE secrets_here (value text)')
    await database.query("INSERT INTO secrets_here VALUES ('a password hash')")
    await database.close()
    // Even with DATA_DIR itself, and the way to it, open to all.
    chmodSync(parent, 0o755)
    chmodSync(dataDirectory, 0o755)
    const asNobody = spawnSync('find', [join(dataDirectory, 'pglite'), '-type', 'f', '-readable'], { uid: 65534, gid: 65534, encoding: 'utf8' })
    expect(asNobody.stdout).toBe('')
    expect(asNobody.stderr).toMatch(/Permission denied/)
  }, 60_000)
})

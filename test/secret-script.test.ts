import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { verify } from '@octokit/webhooks-methods'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { sealTotpSecret } from '../src/domain/accounts/two-factor.js'
import { decryptSecret, encryptSecret } from '../src/domain/secret-box.js'
import { createKeyRing } from '../src/secret.js'
import { StartupError } from '../src/startup-error.js'
import { migrate, readMigrations } from '../src/storage/migrate.js'
import { lockDataDirectory, openStorage } from '../src/storage/open-storage.js'
import type { SqlDatabase } from '../src/storage/ports.js'
import { openPostgresDatabase } from '../src/storage/postgres/postgres-database.js'
import { checkServerSecret, readKeyCheck } from '../src/storage/sql/server-key-check.js'
import { asScript, createTestAccount, randomClientAddress, type TestAccount } from './helpers/dashboard-client.js'
import { createScratchDatabase, type ScratchDatabase } from './helpers/scratch-database.js'
import { hasPostgres } from './helpers/services.js'
import { hasTerminal, runOnTerminal } from './helpers/terminal.js'
import { databaseKinds, withTestDatabase } from './helpers/storage.js'
import { authenticatorCode, enableTwoFactor } from './helpers/two-factor.js'
import { startWebhookReceiver } from './helpers/webhook-receiver.js'
import { blockedEvent, createWebhookSite } from './helpers/webhook-site.js'

const newSecret = () => randomBytes(36).toString('base64url')

interface Ran {
  status: number | null
  stdout: string
  stderr: string
}

function runNode(args: string[], env: Record<string, string>, input = ''): Ran {
  const result = spawnSync(process.execPath, ['--import', 'tsx', ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    input,
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() }
}

const secretScript = (args: string[], env: Record<string, string>, input = '') => runNode(['scripts/secret.ts', ...args], env, input)

describe.each(databaseKinds.filter(({ available }) => available))('the database keeps which secret it goes with ($kind)', ({ kind }) => {
  it('records the first secret; the same one matches; another stops a production start, and outside production is told but not recorded', async () => {
    await withTestDatabase(kind, async (database) => {
      const first = createKeyRing(newSecret())
      const second = createKeyRing(newSecret())
      expect(await checkServerSecret(database, first, 'production')).toBe('recorded')
      expect(await checkServerSecret(database, first, 'production')).toBe('matches')
      const refusal = checkServerSecret(database, second, 'production')
      await expect(refusal).rejects.toBeInstanceOf(StartupError)
      await expect(refusal).rejects.toThrow(/^TOLLGATE_SECRET is not the secret this database was set up with/)
      expect(await checkServerSecret(database, first, 'production')).toBe('matches')

      // A development start pointed at the database by mistake leaves production's secret its own.
      expect(await checkServerSecret(database, second, 'development')).toBe('differs')
      expect(await checkServerSecret(database, second, 'test')).toBe('differs')
      expect(await checkServerSecret(database, first, 'production')).toBe('matches')
    })
  })

  it('records no secret with white space at either end; one the database went with matches; another is told with the white space as the likely cause', async () => {
    await withTestDatabase(kind, async (database) => {
      const padded = createKeyRing(`${newSecret()}\n`)
      const whiteSpaceAtEnds = { whiteSpaceAtEnds: true }
      for (const environment of ['production', 'development'] as const) {
        const refusal = checkServerSecret(database, padded, environment, whiteSpaceAtEnds)
        await expect(refusal).rejects.toBeInstanceOf(StartupError)
        await expect(refusal).rejects.toThrow(/^TOLLGATE_SECRET begins or ends with white space, .* this database has no secret of its own yet: it is not recorded with it\. Make the file without it/)
      }
      expect(await readKeyCheck(database)).toBeUndefined()
      // Set up by a release that took it as it was.
      expect(await checkServerSecret(database, padded, 'production')).toBe('recorded')
      expect(await checkServerSecret(database, padded, 'production', whiteSpaceAtEnds)).toBe('matches')
      const other = createKeyRing(`${newSecret()}\n`)
      await expect(checkServerSecret(database, other, 'production', whiteSpaceAtEnds)).rejects.toThrow(
        /^TOLLGATE_SECRET is not the secret this database was set up with: .*\. TOLLGATE_SECRET begins or ends with white space .*the likely cause: try it stripped/,
      )
      expect(await checkServerSecret(database, other, 'development', whiteSpaceAtEnds)).toBe('differs')
    })
  })

  // Two databases migrated from nothing: on PGlite, in a full run on a loaded machine, that took longer than 30 s.
  it('lets the first production start replace a secret a development start recorded on a database production had not started on', { timeout: 90_000 }, async () => {
    await withTestDatabase(kind, async (database) => {
      const development = createKeyRing(newSecret())
      const production = createKeyRing(newSecret())
      expect(await checkServerSecret(database, development, 'development')).toBe('recorded')
      expect(await checkServerSecret(database, production, 'production')).toBe('replaced')
      expect(await checkServerSecret(database, production, 'production')).toBe('matches')
      // From then on it is production's: development is told, and production stops another.
      expect(await checkServerSecret(database, development, 'development')).toBe('differs')
      await expect(checkServerSecret(database, development, 'production')).rejects.toBeInstanceOf(StartupError)
      // A production start with the secret a development start recorded makes it production's too.
      await withTestDatabase(kind, async (other) => {
        expect(await checkServerSecret(other, development, 'test')).toBe('recorded')
        expect(await checkServerSecret(other, development, 'production')).toBe('matches')
        await expect(checkServerSecret(other, production, 'production')).rejects.toBeInstanceOf(StartupError)
      })
    })
  })
})

describe.skipIf(!hasPostgres)('npm run secret, on PostgreSQL', () => {
  let database: ScratchDatabase
  const oldSecret = newSecret()
  const webhookSecret = 'the receiver knows this one'
  const replacedWebhookSecret = 'the receiver knew this one before'

  beforeAll(async () => {
    database = await createScratchDatabase('tollgate_secret')
  })
  afterAll(() => database?.drop())

  const countIdempotencyKeys = async (): Promise<number> =>
    (await withTestDatabaseAt(database.url, (opened) => opened.query<{ count: number }>('SELECT count(*)::int AS count FROM idempotency_keys')))[0]?.count ?? -1

  async function withService(secret: string, use: (app: App) => Promise<void>): Promise<void> {
    const config = loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: secret, DATABASE_URL: database.url })
    const app = await buildApp({ config, storage: await openStorage(config), keyRing: createKeyRing(secret), logger: false })
    try {
      await use(app)
    } finally {
      await app.close()
    }
  }

  it('moves the database to a new secret with the webhook and authenticator secrets sealed again; instances with the old one stop; webhooks stay signed as before, authenticator codes keep logging in', async () => {
    const receiver = await startWebhookReceiver()
    try {
      let siteId = ''
      let lostSiteId = ''
      let owner: TestAccount | undefined
      let authenticator = ''
      let lostOwner: TestAccount | undefined
      await withService(oldSecret, async (app) => {
        // An account with two-factor on, and one whose authenticator secret is sealed under a lost secret.
        owner = await createTestAccount(app)
        authenticator = (await enableTwoFactor(app, owner)).secret
        lostOwner = await createTestAccount(app)
        await enableTwoFactor(app, lostOwner)
        await app.database.query('UPDATE accounts SET totp_secret_sealed = $2 WHERE id = $1', [
          lostOwner.id,
          sealTotpSecret(createKeyRing(newSecret()).keyFor('two-factor'), lostOwner.id, 'JBSWY3DPEHPK3PXP'),
        ])
        expect(await checkServerSecret(app.database, app.keyRing, 'production')).toBe('recorded')
        siteId = (await createWebhookSite(app, { webhookUrl: receiver.url, secret: replacedWebhookSecret })).id
        // Replaced an hour ago: the secret before it still signs beside it (docs/webhooks.md, "Rotating the secret").
        await app.sites.update(siteId, {
          webhookSecretCiphertext: encryptSecret(app.keyRing.keyFor('webhook-encryption'), webhookSecret, siteId),
          previousWebhookSecretExpiresAt: new Date(Date.now() + 23 * 3_600_000),
        })
        // A webhook secret sealed under a secret the database left long ago: nobody can read it.
        const lost = await createWebhookSite(app, { webhookUrl: receiver.url })
        lostSiteId = lost.id
        const lostKey = createKeyRing(newSecret()).keyFor('webhook-encryption')
        await app.database.query(
          `UPDATE sites SET webhook_secret_ciphertext = $2, name = $3, previous_webhook_secret_ciphertext = $4,
             previous_webhook_secret_expires_at = now() + interval '1 hour' WHERE id = $1`,
          [lost.id, encryptSecret(lostKey, 'gone', lost.id), 'Old shop, Berlin', encryptSecret(lostKey, 'gone before', lost.id)],
        )
        // A site created with an Idempotency-Key: its answer is kept, sealed under the old secret.
        const created = await app.inject({
          method: 'POST',
          url: '/api/v1/sites',
          headers: { ...asScript(owner), 'idempotency-key': 'before-the-change' },
          payload: { name: 'Made before the change' },
        })
        expect(created.statusCode, created.body).toBe(201)
        expect(await countIdempotencyKeys()).toBe(1)
      })
      const production = { NODE_ENV: 'production', DATABASE_URL: database.url }
      const nextSecret = newSecret()

      expect(secretScript(['check'], { ...production, TOLLGATE_SECRET: oldSecret })).toMatchObject({
        status: 0,
        stdout: `TOLLGATE_SECRET (or, unset, DATA_DIR/secret) is the secret PostgreSQL at ${new URL(database.url).toString()} goes with`,
      })
      // The current secret must be the database's, and the new one a secret.
      const wrongCurrent = secretScript(['change'], { ...production, TOLLGATE_SECRET: newSecret() }, `${nextSecret}\n`)
      expect(wrongCurrent).toMatchObject({
        status: 1,
        stderr: 'tollgate secret: TOLLGATE_SECRET (or, unset, DATA_DIR/secret) is not the secret this database goes with; nothing was changed',
      })
      expect(secretScript(['change'], { ...production, TOLLGATE_SECRET: oldSecret }, 'too short\n')).toMatchObject({
        status: 1,
        stderr: 'tollgate secret: the new secret must be at least 32 characters of random key material',
      })
      expect(secretScript(['change'], { ...production, TOLLGATE_SECRET: oldSecret }, `${oldSecret}\n`)).toMatchObject({
        status: 1,
        stderr: 'tollgate secret: the new secret is the current one',
      })

      const changed = secretScript(['change'], { ...production, TOLLGATE_SECRET: oldSecret }, `${nextSecret}\n`)
      expect(changed.status, changed.stderr).toBe(0)
      const lostReplacedLine = (site: string) =>
        `1 site(s) held a replaced webhook secret the current secret could not decrypt, still signing beside the new one: ` +
        `it no longer does (receivers verify with the site's current webhook secret): ${site}`
      const lostAccountLine = (count: number, owners: string) =>
        `${count} account(s) hold an authenticator secret the current secret could not decrypt (they log in with a recovery code, ` +
        `or npm run account -- disable-two-factor): ${owners}`
      expect(changed.stdout.split('\n')).toEqual([
        'the database now goes with the new secret; 1 webhook secret(s), 1 replaced webhook secret(s) and 1 authenticator secret(s) sealed under it',
        `1 site(s) hold a webhook secret the current secret could not decrypt (set it again in the dashboard): "Old shop, Berlin" (${lostSiteId})`,
        lostReplacedLine(`"Old shop, Berlin" (${lostSiteId})`),
        lostAccountLine(1, lostOwner?.email ?? ''),
        'start every instance with the new TOLLGATE_SECRET',
        'challenges, tokens, remembered devices and unfinished two-factor setups issued before the change are refused from now on',
        'a creation retried with an Idempotency-Key sent before the change is made anew',
      ])
      // The replaced webhook secret is sealed under the new secret, so it keeps signing; the one
      // nobody could read is gone.
      const replacedRows = await withTestDatabaseAt(database.url, (opened) =>
        opened.query<{ id: string; sealed: string | null }>('SELECT id, previous_webhook_secret_ciphertext AS sealed FROM sites WHERE id = ANY($1::uuid[])', [[siteId, lostSiteId]]),
      )
      const sealedOf = (id: string) => replacedRows.find((row) => row.id === id)?.sealed
      expect(decryptSecret(createKeyRing(nextSecret).keyFor('webhook-encryption'), sealedOf(siteId) ?? '', siteId)).toBe(replacedWebhookSecret)
      expect(sealedOf(lostSiteId)).toBeNull()
      // Retries' answers sealed under the old secret are dropped: no instance could open them.
      expect(await countIdempotencyKeys()).toBe(0)
      expect(secretScript(['check'], { ...production, TOLLGATE_SECRET: oldSecret })).toMatchObject({
        status: 1,
        stderr: `tollgate secret: TOLLGATE_SECRET (or, unset, DATA_DIR/secret) is not the secret PostgreSQL at ${new URL(database.url).toString()} goes with`,
      })

      // An instance left with the old secret stops at start, in one line.
      const stale = runNode(['src/server.ts'], { ...production, TOLLGATE_SECRET: oldSecret, PORT: '0', HOST: '127.0.0.1' })
      expect(stale.status).toBe(1)
      expect(stale.stderr).toMatch(/^tollgate: cannot start: TOLLGATE_SECRET is not the secret this database was set up with: .*npm run secret -- change/)

      // The new secret lost: adopting another one lets instances with it start; the webhook
      // secrets sealed under the lost one are named, to be set again.
      const replacement = newSecret()
      const adopted = secretScript(['adopt'], { ...production, TOLLGATE_SECRET: replacement })
      expect(adopted.status, adopted.stderr).toBe(0)
      expect(adopted.stdout.split('\n')).toEqual([
        'the database now goes with TOLLGATE_SECRET (or, unset, DATA_DIR/secret); instances with another secret stop at their next start in production',
        // Each site by the name the dashboard shows beside its id.
        `2 site(s) hold a webhook secret the current secret could not decrypt (set it again in the dashboard): ${[siteId, lostSiteId]
          .sort()
          .map((id) => `"${id === siteId ? 'Webhook test site' : 'Old shop, Berlin'}" (${id})`)
          .join(', ')}`,
        lostReplacedLine(`"Webhook test site" (${siteId})`),
        lostAccountLine(2, [owner, lostOwner].sort((a, b) => (a?.id ?? '').localeCompare(b?.id ?? '')).map((account) => account?.email).join(', ')),
      ])
      expect(secretScript(['adopt'], { ...production, TOLLGATE_SECRET: replacement })).toMatchObject({
        status: 0,
        stdout: 'TOLLGATE_SECRET (or, unset, DATA_DIR/secret) is already the secret this database goes with',
      })
      // And back, as if the lost one turned up again.
      expect(secretScript(['adopt'], { ...production, TOLLGATE_SECRET: nextSecret }).stdout.split('\n')).toHaveLength(3)

      // With the new secret, the site's webhooks are signed with the secret its receiver knows.
      await withService(nextSecret, async (app) => {
        expect(await checkServerSecret(app.database, app.keyRing, 'production')).toBe('matches')
        app.events.emit('verification.blocked', blockedEvent(siteId))
        const request = await receiver.waitForRequest()
        expect(await verify(webhookSecret, request.body, String(request.headers['x-service-signature']))).toBe(true)
        await app.webhooks.settle()
        // The authenticator app's codes still log its owner in.
        const loggedIn = await app.inject({
          method: 'POST',
          url: '/api/v1/sessions',
          payload: { email: owner?.email, password: owner?.password, code: authenticatorCode(authenticator, 1) },
          remoteAddress: randomClientAddress(),
        })
        expect(loggedIn.statusCode, loggedIn.body).toBe(200)
      })
    } finally {
      await receiver.close()
    }
  }, 180_000)
})

describe.skipIf(!hasPostgres)('npm run secret -- check, ahead of a rolling deploy', () => {
  it('reads the database of the release before as it is: no migration of the new release runs', async () => {
    const older = await createScratchDatabase('tollgate_secret_check')
    try {
      const migrations = await readMigrations()
      const latest = Math.max(...migrations.map((migration) => migration.version))
      await withTestDatabaseAt(older.url, (database) => migrate(database, migrations.filter((migration) => migration.version < latest)))
      const ran = secretScript(['check'], { NODE_ENV: 'production', DATABASE_URL: older.url, TOLLGATE_SECRET: newSecret() })
      expect(ran).toMatchObject({ status: 0, stdout: `PostgreSQL at ${new URL(older.url).toString()} goes with no secret yet: the first instance to start records its own` })
      const versions = await withTestDatabaseAt(older.url, (database) => database.query<{ version: number }>('SELECT max(version)::int AS version FROM schema_migrations'))
      expect(versions[0]?.version).toBe(latest - 1)
    } finally {
      await older.drop()
    }
  }, 60_000)

  it('refuses a database without the service\'s tables, and creates none', async () => {
    const empty = await createScratchDatabase('tollgate_secret_empty')
    try {
      const ran = secretScript(['check'], { NODE_ENV: 'production', DATABASE_URL: empty.url, TOLLGATE_SECRET: newSecret() })
      expect(ran.status).toBe(1)
      expect(ran.stderr).toBe(`tollgate secret: PostgreSQL at ${new URL(empty.url).toString()} holds no Tollgate schema with a secret check yet (start the service once, or check DATABASE_URL and DATA_DIR)`)
      const tables = await withTestDatabaseAt(empty.url, (database) => database.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'schema_migrations'"))
      expect(tables).toEqual([])
    } finally {
      await empty.drop()
    }
  }, 60_000)
})

/** Runs `use` on the PostgreSQL database at `url`, closed after. */
async function withTestDatabaseAt<T>(url: string, use: (database: SqlDatabase) => Promise<T>): Promise<T> {
  const database = await openPostgresDatabase({ connectionString: url })
  try {
    return await use(database)
  } finally {
    await database.close()
  }
}

describe('npm run secret, on the embedded database with the secret in DATA_DIR', () => {
  it('writes the new secret to DATA_DIR/secret, which the next start uses', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tollgate-secret-'))
    const development = { NODE_ENV: 'development', DATA_DIR: dataDirectory, TOLLGATE_SECRET: '' }
    // No secret anywhere: nothing is made up (adopt would make a random one the database's).
    for (const command of ['check', 'adopt', 'change']) {
      expect(secretScript([command], development)).toMatchObject({ status: 1, stderr: `tollgate secret: TOLLGATE_SECRET is unset and ${join(dataDirectory, 'secret')} does not exist` })
    }
    expect(readdirSync(dataDirectory)).toEqual([])
    writeFileSync(join(dataDirectory, 'secret'), `${newSecret()}\n`)
    // Never started: there is no database to check, and check makes none (a mistyped DATA_DIR would pass).
    expect(secretScript(['check'], development)).toMatchObject({
      status: 1,
      stderr: `tollgate secret: there is no database: the embedded database in ${join(dataDirectory, 'pglite')} does not exist (set DATA_DIR, or DATABASE_URL, as the server has them)`,
    })
    expect(readdirSync(dataDirectory)).toEqual(['secret'])
    const nextSecret = newSecret()
    // While the server holds the database, nothing changes, and no copy of the new secret is left.
    const unlock = await lockDataDirectory(dataDirectory)
    try {
      expect(secretScript(['change'], development, `${nextSecret}\n`)).toMatchObject({ status: 1, stderr: expect.stringMatching(/is in use by another Tollgate process/) as string })
    } finally {
      await unlock()
    }
    expect(readdirSync(dataDirectory).filter((name) => name.startsWith('secret'))).toEqual(['secret'])
    const changed = secretScript(['change'], development, `${nextSecret}\n${nextSecret}\n`)
    expect(changed.status, changed.stderr).toBe(0)
    expect(changed.stdout).toContain(`${join(dataDirectory, 'secret')} holds the new secret`)
    expect(readFileSync(join(dataDirectory, 'secret'), 'utf8')).toBe(`${nextSecret}\n`)
    expect(secretScript(['check'], development)).toMatchObject({ status: 0 })

    const config = loadConfig(development)
    const storage = await openStorage(config)
    try {
      expect(await readKeyCheck(storage.database)).toBeDefined()
      expect(await checkServerSecret(storage.database, createKeyRing(nextSecret), 'production')).toBe('matches')
    } finally {
      await storage.database.close()
      await storage.keyValue.close()
    }
  }, 120_000)

  it('names what is wrong with its arguments, and prints its usage on --help', () => {
    const development = { NODE_ENV: 'development', DATA_DIR: mkdtempSync(join(tmpdir(), 'tollgate-secret-')), TOLLGATE_SECRET: newSecret() }
    const usage = secretScript(['--help'], development)
    expect(usage).toMatchObject({ status: 0, stderr: '', stdout: expect.stringMatching(/^usage: npm run secret -- check \| change \| adopt\n/) as string })
    // What change reads: the terminal's two entries, or standard input's one line.
    expect(usage.stdout).toMatch(/asks for it twice, without echo,\s+on a terminal, otherwise reads it from standard input, one line/)
    expect(secretScript(['-h'], development)).toEqual(usage)
    expect(secretScript(['rotate'], development)).toMatchObject({ status: 1, stdout: '', stderr: `tollgate secret: ${usage.stdout}` })
    expect(secretScript([], development)).toMatchObject({ status: 1, stdout: '', stderr: `tollgate secret: ${usage.stdout}` })
    expect(secretScript(['change'], development, ' padded secret with enough characters in it \n')).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/^tollgate secret: the new secret may not begin or end with white space, such as the newline that ends a file/) as string,
    })
  }, 60_000)

  it.skipIf(!hasTerminal)('on a terminal, refuses a new secret too short at its first entry, before asking for it again', () => {
    const development = { NODE_ENV: 'development', DATA_DIR: mkdtempSync(join(tmpdir(), 'tollgate-secret-')), TOLLGATE_SECRET: newSecret(), LOG_LEVEL: 'silent' }
    const ran = runOnTerminal(['scripts/secret.ts', 'change'], development, 'too short\n')
    expect(ran.status).toBe(1)
    expect(ran.output).toContain('New secret: \ntollgate secret: the new secret must be at least 32 characters of random key material')
    expect(ran.output).not.toContain('again')
    expect(readdirSync(development.DATA_DIR)).toEqual([])
  }, 60_000)
})

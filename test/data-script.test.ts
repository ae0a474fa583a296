import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { decryptSecret } from '../src/domain/secret-box.js'
import { createKeyRing, resolveSecret } from '../src/secret.js'
import { lockDataDirectory, openStorage } from '../src/storage/open-storage.js'
import { checkServerSecret, readKeyCheck } from '../src/storage/sql/server-key-check.js'
import { browserHeaders, obtainToken, passVerification } from './helpers/core-flow.js'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from './helpers/dashboard-client.js'
import { freePort } from './helpers/free-port.js'
import { createScratchDatabase, type ScratchDatabase } from './helpers/scratch-database.js'
import { hasPostgres } from './helpers/services.js'

const dataScript = (args: string[]) => {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/data.ts', ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: 120_000,
  })
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() }
}

/** The app on `config`'s storage, closed (its logs and counters written) after `use`. */
async function withApp(env: Record<string, string>, secret: string, use: (app: App) => Promise<void>): Promise<void> {
  const config = loadConfig({ NODE_ENV: 'test', ...env })
  const app = await buildApp({ config, storage: await openStorage(config), keyRing: createKeyRing(secret), logger: false })
  try {
    await use(app)
  } finally {
    await app.close()
  }
}

/** A production start of the server on `databaseUrl`: its exit code and what it wrote, or 'serving'. */
async function startProduction(databaseUrl: string, secret: string): Promise<{ code: number | null | 'serving'; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      TOLLGATE_SECRET: secret,
      DATABASE_URL: databaseUrl,
      PUBLIC_URL: 'https://tollgate.example.com',
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'tollgate-data-move-production-')),
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  let served = false
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`neither served nor stopped within 60 s:\n${output}`)), 60_000)
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (!served && output.includes('Tollgate is serving')) {
        served = true
        child.kill('SIGTERM')
      }
    })
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code: served ? 'serving' : code, output })
    })
  })
}

/** The site's statistics over a fixed period around the test, so that two readings compare. */
const period = `from=${new Date(Date.now() - 86_400_000).toISOString()}&to=${new Date(Date.now() + 86_400_000).toISOString()}`
const statsOf = async (app: App, account: TestAccount, siteId: string) =>
  (await app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}/stats?${period}`, headers: asScript(account) })).json<object>()

describe.skipIf(!hasPostgres)('npm run data -- copy, from the embedded database to PostgreSQL', { timeout: 180_000 }, () => {
  const dataDirectory = mkdtempSync(join(tmpdir(), 'tollgate-data-move-'))
  const webhookSecret = 'the-receiver-knows-this-one-0123456789'
  let target: ScratchDatabase
  let secret = ''
  let account: TestAccount
  let site: CreatedSite
  let stats: object

  beforeAll(async () => {
    target = await createScratchDatabase('tollgate_data_move')
    // What npm install && npm start left: the embedded database in DATA_DIR and the secret generated beside it.
    const env = { DATA_DIR: dataDirectory }
    secret = await resolveSecret(loadConfig({ NODE_ENV: 'test', ...env }))
    await withApp(env, secret, async (app) => {
      expect(await checkServerSecret(app.database, app.keyRing, 'development')).toBe('recorded')
      account = await createTestAccount(app)
      site = await createTestSite(app, account, { name: 'Shop', settings: { difficulty: 4 } })
      const update = await app.inject({
        method: 'PUT',
        url: `/api/v1/sites/${site.id}`,
        headers: asScript(account),
        payload: { settings: { webhookUrl: 'https://shop.example.com/hooks/tollgate', webhookSecret } },
      })
      expect(update.statusCode, update.body).toBe(200)
      for (let index = 0; index < 3; index++) expect((await passVerification(app, browserHeaders(site.siteKey))).statusCode).toBe(200)
      const token = await obtainToken(app, browserHeaders(site.siteKey))
      const redeemed = await app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response: token } })
      expect(redeemed.json()).toMatchObject({ success: true })
    })
    // Read once the verifications are written (at close): the counts the copy must keep.
    await withApp(env, secret, async (app) => {
      stats = await statsOf(app, account, site.id)
    })
    expect(JSON.stringify(stats)).toMatch(/"total":4\b/)
  }, 180_000)
  afterAll(() => target?.drop())

  it('refuses a source a running server holds, and copies nothing', async () => {
    const release = await lockDataDirectory(dataDirectory)
    try {
      const refused = dataScript(['copy', '--from', dataDirectory, '--to', target.url])
      expect(refused.status).toBe(1)
      expect(refused.stderr).toMatch(/^tollgate data: DATA_DIR .* is in use by another Tollgate process \(pid \d+\)/)
    } finally {
      await release()
    }
  })

  it('copies every table, tells the counts and the secret production must start with', () => {
    const copied = dataScript(['copy', '--from', join(dataDirectory, 'pglite'), '--to', target.url])
    expect(copied.status, copied.stderr).toBe(0)
    expect(copied.stdout).toMatch(/^\s+accounts\s+1$/m)
    expect(copied.stdout).toMatch(/^\s+sites\s+1$/m)
    expect(copied.stdout).toMatch(/^\s+api_keys\s+1$/m)
    expect(copied.stdout).toMatch(/^\s+verifications\s+4$/m)
    expect(copied.stdout).toContain(`TOLLGATE_SECRET="$(cat ${join(dataDirectory, 'secret')})"`)
    expect(copied.stdout).toContain('npm run secret -- change')
    expect(copied.stdout).toMatch(/challenges not yet answered,\ntokens not yet redeemed/)
  })

  it('refuses a production start with another secret while a webhook secret is sealed under the copied one', async () => {
    const started = await startProduction(target.url, randomBytes(36).toString('base64url'))
    expect(started.code).toBe(1)
    expect(started.output).toContain("1 site(s)' webhook secret(s) and 0 account(s)' authenticator secret(s) (two-factor) are sealed under that one")
    expect(started.output).toContain('npm run secret -- adopt')
    await withApp({ DATABASE_URL: target.url }, secret, async (app) => {
      expect(await readKeyCheck(app.database)).toMatchObject({ inProduction: false })
    })
  })

  it('serves the copied service on PostgreSQL with the same secret: keys, webhook secret and statistics as they were', async () => {
    const started = await startProduction(target.url, secret)
    expect(started.code, started.output).toBe('serving')
    await withApp({ DATABASE_URL: target.url }, secret, async (app) => {
      expect(await statsOf(app, account, site.id)).toEqual(stats)
      const listed = await app.inject({ method: 'GET', url: '/api/v1/sites', headers: asScript(account) })
      expect(listed.statusCode).toBe(200)
      expect(listed.body).toContain(site.id)
      const [row] = await app.database.query<{ sealed: string }>('SELECT webhook_secret_ciphertext AS sealed FROM sites WHERE id = $1', [site.id])
      expect(decryptSecret(app.keyRing.keyFor('webhook-encryption'), row?.sealed ?? '', site.id)).toBe(webhookSecret)
      const token = await obtainToken(app, browserHeaders(site.siteKey))
      const redeemed = await app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response: token } })
      expect(redeemed.json()).toMatchObject({ success: true })
    })
  })

  it('refuses a target that holds an account or a site; --replace empties it and copies again, counting nothing twice', async () => {
    const refused = dataScript(['copy', '--from', dataDirectory, '--to', target.url])
    expect(refused).toMatchObject({ status: 1 })
    expect(refused.stderr).toBe(
      'tollgate data: the target already holds 1 account(s) and 1 site(s): nothing was copied (add --replace to empty it first, or give an empty database)',
    )
    const replaced = dataScript(['copy', '--from', dataDirectory, '--to', target.url, '--replace'])
    expect(replaced.status, replaced.stderr).toBe(0)
    expect(replaced.stdout).toMatch(/^\s+verifications\s+4$/m)
    await withApp({ DATABASE_URL: target.url }, secret, async (app) => {
      expect(await statsOf(app, account, site.id)).toEqual(stats)
    })
  })

  it('lets a production start with another secret replace the copied one when nothing is sealed under it', async () => {
    await target.run('UPDATE sites SET webhook_secret_ciphertext = NULL')
    const other = randomBytes(36).toString('base64url')
    const started = await startProduction(target.url, other)
    expect(started.code, started.output).toBe('serving')
    await withApp({ DATABASE_URL: target.url }, other, async (app) => {
      expect(await readKeyCheck(app.database)).toMatchObject({ inProduction: true })
    })
    expect(readFileSync(join(dataDirectory, 'secret'), 'utf8').trim()).toBe(secret)
  })
})

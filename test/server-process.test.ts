import { spawnSync } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { chownSync, existsSync, mkdtempSync, readdirSync, renameSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../src/domain/challenge/issue-challenge.js'
import { encryptSecret } from '../src/domain/secret-box.js'
import { createKeyRing } from '../src/secret.js'
import { migrate } from '../src/storage/migrate.js'
import { openDatabase } from '../src/storage/open-storage.js'
import { checkServerSecret, readKeyCheck, sameKeyCheck } from '../src/storage/sql/server-key-check.js'
import { browserHeaders, humanSubmission } from './helpers/core-flow.js'
import { freePort } from './helpers/free-port.js'
import { createScratchDatabase } from './helpers/scratch-database.js'
import { hasPostgres } from './helpers/services.js'
import { startServerProcess, killStartedServers, type StartedServer as Started } from './helpers/server-process.js'
import { hasTerminal, startOnTerminal } from './helpers/terminal.js'

/**
 * The real process, as an operator runs it: `npm start` on the embedded stores, then SIGTERM.
 * Checks the shutdown promise of the README: in-flight requests finish, counters are stored,
 * the exit code is 0, and the next start serves the stored counters.
 */
const dataDirectory = mkdtempSync(join(tmpdir(), 'tollgate-process-'))

function isJson(line: string): boolean {
  try {
    JSON.parse(line)
    return true
  } catch {
    return false
  }
}

function startServer(env: Record<string, string> = {}): Promise<Started> {
  return startServerProcess({ DATA_DIR: dataDirectory, ...env })
}

/** A token for the demo site, the way the SDK gets one: a challenge, solved here, submitted. */
async function obtainToken(started: Started): Promise<string> {
  const headers = browserHeaders(started.siteKey, started.baseUrl)
  const challenge = (await (await fetch(`${started.baseUrl}/api/v1/challenge`, { method: 'POST', headers })).json()) as Challenge
  const body = JSON.stringify(humanSubmission(challenge))
  const verdict = (await (await fetch(`${started.baseUrl}/api/v1/verify`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body })).json()) as { token?: string }
  if (verdict.token === undefined) throw new Error(`no token: ${JSON.stringify(verdict)}`)
  return verdict.token
}

async function siteverify(started: Started, token: string): Promise<{ success: boolean; 'error-codes': string[] }> {
  const body = new URLSearchParams({ secret: started.secretKey, response: token })
  return (await (await fetch(`${started.baseUrl}/siteverify`, { method: 'POST', body })).json()) as { success: boolean; 'error-codes': string[] }
}

async function readChallengesIssued(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text()
  const line = text.split('\n').find((entry) => entry.startsWith('tollgate_challenges_issued_total '))
  return Number(line?.split(' ')[1])
}

/**
 * Sends the head of a request now and its body later, over a raw socket that asks for
 * keep-alive, as browsers do: the server must end the connection itself to finish its shutdown.
 */
function startSlowRequest(baseUrl: string, siteKey: string, body: string): { finish: () => void; response: Promise<string> } {
  const { hostname, port } = new URL(baseUrl)
  const socket = net.connect({ host: hostname, port: Number(port) })
  socket.write(
    `POST /api/v1/verify HTTP/1.1\r\nHost: ${hostname}\r\nX-Site-Key: ${siteKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n\r\n`,
  )
  let received = ''
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
  const response = new Promise<string>((resolve) => {
    socket.on('close', () => resolve(received))
    socket.on('error', () => resolve(received))
  })
  return { finish: () => socket.write(body), response }
}

afterAll(killStartedServers)

describe('the server process', () => {
  it('on SIGTERM finishes in-flight requests, stores its counters and exits 0; the next start serves them', async () => {
    const first = await startServer()
    for (let index = 0; index < 3; index += 1) {
      const response = await fetch(`${first.baseUrl}/api/v1/challenge`, { method: 'POST', headers: { 'x-site-key': first.siteKey } })
      expect(response.status).toBe(200)
    }
    expect(await readChallengesIssued(first.baseUrl)).toBe(3)

    const slow = startSlowRequest(first.baseUrl, first.siteKey, JSON.stringify({ challengeId: 'not-a-uuid' }))
    await new Promise((resolve) => setTimeout(resolve, 300))
    first.process.kill('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, 300))
    slow.finish()
    // The request that was in flight at SIGTERM still gets its whole answer, which closes the
    // kept-alive connection instead of holding the shutdown for the keep-alive timeout.
    const answer = await slow.response
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(answer).toMatch(/^connection: close\r$/im)
    expect(await first.exited).toBe(0)
    // The last line says the shutdown finished, and what it wrote: a log tells it from a kill.
    const lastLine = JSON.parse(first.output().trim().split('\n').at(-1) ?? '') as { level: number; msg: string; written: Record<string, number> }
    expect(lastLine).toMatchObject({ level: 30, msg: 'stopped', written: expect.objectContaining({ 'metric counter increments': expect.any(Number) }) })

    const second = await startServer()
    expect(await readChallengesIssued(second.baseUrl)).toBe(3)
    second.process.kill('SIGINT')
    expect(await second.exited).toBe(0)
  }, 120_000)

  it('takes a stop sent twice at once (to the whole process group, and forwarded by npm) as one: finishes the shutdown and exits 0', async () => {
    const first = await startServer()
    const before = await readChallengesIssued(first.baseUrl)
    for (let index = 0; index < 2; index += 1) {
      expect((await fetch(`${first.baseUrl}/api/v1/challenge`, { method: 'POST', headers: { 'x-site-key': first.siteKey } })).status).toBe(200)
    }
    // A request in flight keeps the shutdown under way while the repeated signal arrives.
    const slow = startSlowRequest(first.baseUrl, first.siteKey, JSON.stringify({ challengeId: 'not-a-uuid' }))
    await new Promise((resolve) => setTimeout(resolve, 300))
    first.process.kill('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, 50))
    first.process.kill('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, 300))
    slow.finish()
    expect(await slow.response).toMatch(/^HTTP\/1\.1 400 /)
    expect(await first.exited).toBe(0)

    const second = await startServer()
    expect(await readChallengesIssued(second.baseUrl)).toBe(before + 2)
    second.process.kill('SIGTERM')
    expect(await second.exited).toBe(0)
  }, 120_000)

  it('refuses a second process on the same DATA_DIR in one line while the first serves on; takes over the lock of one killed, and still redeems its tokens once', async () => {
    const first = await startServer()
    const second = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, NODE_ENV: 'development', PORT: String(await freePort()), HOST: '127.0.0.1', DATA_DIR: dataDirectory },
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(second.status).toBe(1)
    expect(second.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^tollgate: cannot start: DATA_DIR .* is in use by another Tollgate process \\(pid ${first.process.pid}\\)`)),
    ])
    expect((await fetch(`${first.baseUrl}/health`)).status).toBe(200)
    const token = await obtainToken(first)
    expect(await siteverify(first, token)).toMatchObject({ success: true })

    // A process that dies without closing (a crash, kill -9) leaves its lock behind.
    first.process.kill('SIGKILL')
    await first.exited
    const next = await startServer()
    expect((await fetch(`${next.baseUrl}/health`)).status).toBe(200)
    // The in-process store forgot the redemption with the process; the token is still refused.
    expect(await siteverify(next, token)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    next.process.kill('SIGTERM')
    expect(await next.exited).toBe(0)
  }, 120_000)

  it.skipIf(!hasTerminal)('tells the demo site\'s keys in plain lines too on a terminal (npm start), and stops on Ctrl-C', async () => {
    const port = await freePort()
    const terminal = startOnTerminal(['src/server.ts'], {
      NODE_ENV: 'development',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'tollgate-terminal-')),
      LOG_LEVEL: 'info',
    })
    try {
      await expect.poll(() => terminal.output(), { timeout: 60_000, interval: 100 }).toContain('API docs')
      const demo = /site key (tgk_[\w-]+), secret key (tgs_[\w-]+)/.exec(terminal.output())
      expect(terminal.output()).toContain(
        [
          `  Tollgate (development) is serving on http://localhost:${port}`,
          '',
          `  Demo site     http://localhost:${port}/demo`,
          `    site key    ${demo?.[1]}`,
          `    secret key  ${demo?.[2]}`,
          `  Dashboard     http://localhost:${port}/dashboard`,
          `  API docs      http://localhost:${port}/docs`,
        ].join('\n'),
      )
    } finally {
      terminal.type('\x03')
    }
    expect(await terminal.exited).toBe(0)
  }, 90_000)

  it('says it serves on the address HOST names when that is neither every address nor the loopback, which localhost would not reach', async () => {
    const started = await startServer({ HOST: '127.0.0.2' })
    const servedAt = /Tollgate is serving on (http:\/\/[^"]+)"/.exec(started.output())?.[1]
    expect(servedAt).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/)
    expect((await fetch(`${servedAt}/health`)).status).toBe(200)
    started.process.kill('SIGTERM')
    expect(await started.exited).toBe(0)
  }, 90_000)

  it('stops in one line when the port is taken, exit 1, and leaves no lock in DATA_DIR', async () => {
    const taken = net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const port = (taken.address() as net.AddressInfo).port
    const directory = mkdtempSync(join(tmpdir(), 'tollgate-taken-'))
    try {
      const started = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
        env: { ...process.env, NODE_ENV: 'development', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: directory },
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(started.status).toBe(1)
      expect(started.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(new RegExp(`^tollgate: cannot start: listening on HOST 127\\.0\\.0\\.1, PORT ${port}: listen EADDRINUSE`)),
      ])
      expect(readdirSync(directory).sort()).toEqual(['pglite', 'secret'])
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()))
    }
  }, 60_000)

  it.skipIf(!hasPostgres)('exits 1 and says how many rows were lost when the database cannot take the verification log at shutdown', async () => {
    const database = await createScratchDatabase('tollgate_process')
    try {
      const started = await startServer({ DATABASE_URL: database.url })
      // The log's table goes away under the running service (as a broken schema change would).
      await database.run('ALTER TABLE verifications RENAME TO verifications_away')
      await obtainToken(started)
      await obtainToken(started)
      started.process.kill('SIGTERM')
      expect(await started.exited).toBe(1)
      expect(started.output()).toMatch(/could not write verification log rows at shutdown; 2 lost/)
      // Every line, to the last, is a JSON log line: no stack trace in plain text for a log pipeline to trip on.
      const lines = started.output().trim().split('\n')
      expect(lines.filter((line) => !isJson(line))).toEqual([])
      expect(JSON.parse(lines.at(-1) ?? '')).toMatchObject({ msg: 'unwritten at shutdown: 2 verification log rows' })
    } finally {
      await database.drop()
    }
  }, 120_000)

  it.skipIf(!hasPostgres)('says in one line, with its SQLSTATE, what the database refused at start (a schema not as this version expects)', async () => {
    const database = await createScratchDatabase('tollgate_process')
    try {
      const first = await startServer({ DATABASE_URL: database.url })
      first.process.kill('SIGTERM')
      expect(await first.exited).toBe(0)
      await database.run('ALTER TABLE server_key_check RENAME COLUMN key_check TO key_check_away')
      const started = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
        env: { ...process.env, NODE_ENV: 'development', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDirectory, DATABASE_URL: database.url },
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(started.status).toBe(1)
      expect(started.stderr.trim().split('\n')).toEqual([
        'tollgate: cannot start: checking the secret against the database: column "key_check" of relation "server_key_check" does not exist (SQLSTATE 42703)',
      ])
    } finally {
      await database.drop()
    }
  }, 120_000)

  it('warns at start, naming them, when the database has migrations a newer release applied, and serves on', async () => {
    const first = await startServer()
    first.process.kill('SIGTERM')
    expect(await first.exited).toBe(0)
    // As a newer release leaves the database before a roll back to this one.
    const database = await openDatabase({ dataDirectory, databaseUrl: undefined })
    await database.query("INSERT INTO schema_migrations (version, name) VALUES (998, 'from_a_newer_release'), (999, 'and_another')")
    await database.close()
    let started: Started | undefined
    try {
      started = await startServer()
      const warning = started.output().split('\n').filter(isJson).map((line) => JSON.parse(line) as { level: number; msg: string; unknownMigrations?: string[] })
        .find((line) => line.unknownMigrations !== undefined)
      expect(warning).toMatchObject({ level: 40, unknownMigrations: ['998_from_a_newer_release', '999_and_another'] })
      expect(warning?.msg).toMatch(/^the database has migrations this release does not know \(998_from_a_newer_release, 999_and_another\): a newer release applied them/)
      expect((await fetch(`${started.baseUrl}/api/v1/challenge`, { method: 'POST', headers: { 'x-site-key': started.siteKey } })).status).toBe(200)
      started.process.kill('SIGTERM')
      expect(await started.exited).toBe(0)
    } finally {
      started?.process.kill('SIGTERM')
      await started?.exited
      const cleanup = await openDatabase({ dataDirectory, databaseUrl: undefined })
      await cleanup.query('DELETE FROM schema_migrations WHERE version >= 998')
      await cleanup.close()
    }
  }, 120_000)

  it('warns outside production when the secret is not the one the database was used with, and serves on', async () => {
    const first = await startServer()
    first.process.kill('SIGTERM')
    expect(await first.exited).toBe(0)
    // That start used DATA_DIR/secret; this one is given another.
    const started = await startServer({ TOLLGATE_SECRET: 'another secret of more than thirty-two characters' })
    expect(started.output()).toMatch(/the secret \(TOLLGATE_SECRET, or DATA_DIR\/secret\) is not the one this database goes with/)
    started.process.kill('SIGTERM')
    expect(await started.exited).toBe(0)
  }, 60_000)

  it('outside production, refuses to generate a secret (exit 1, one line) for a database restored without DATA_DIR/secret that holds sealed secrets; starts once the file is back', async () => {
    // A DATA_DIR with its secret, and a site whose webhook secret is sealed under it, as setting a site's webhook seals it.
    const directory = mkdtempSync(join(tmpdir(), 'tollgate-restored-'))
    const secretFile = join(directory, 'secret')
    const secret = randomBytes(32).toString('base64url')
    writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 })
    const database = await openDatabase({ dataDirectory: directory, databaseUrl: undefined })
    try {
      await migrate(database)
      expect(await checkServerSecret(database, createKeyRing(secret), 'development')).toBe('recorded')
      const siteId = randomUUID()
      const sealed = encryptSecret(createKeyRing(secret).keyFor('webhook-encryption'), `whsec_${randomBytes(24).toString('base64url')}`, siteId)
      await database.query(
        "INSERT INTO sites (id, name, site_key, secret_key_hash, webhook_secret_ciphertext) VALUES ($1, 'Shop', $2, $3, $4)",
        [siteId, `tgk_${randomBytes(16).toString('base64url')}`, randomBytes(32).toString('hex'), sealed],
      )
    } finally {
      await database.close()
    }
    // The database restored, the secret file not.
    const kept = join(mkdtempSync(join(tmpdir(), 'tollgate-backup-')), 'secret')
    renameSync(secretFile, kept)
    const refused = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, NODE_ENV: 'development', PORT: '0', HOST: '127.0.0.1', DATA_DIR: directory, TOLLGATE_SECRET: '' },
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(refused.status).toBe(1)
    expect(refused.stderr.trim().split('\n')).toEqual([
      `tollgate: cannot start: TOLLGATE_SECRET is unset and ${secretFile} does not exist, but this database holds 1 site(s)' webhook secret(s) ` +
        "and 0 account(s)' authenticator secret(s) (two-factor) sealed under the secret it was used with: a new secret could not decrypt them, " +
        `so none is generated. Restore the secret file from the same backup as the database (${secretFile}), or set TOLLGATE_SECRET to that secret; ` +
        `if it is lost, write a new one to the file (\`(umask 077; mkdir -p ${directory} && openssl rand -base64 48 | tr -d '\\n' > ${secretFile})\`) and run ` +
        'npm run secret -- adopt, which names the sites and accounts whose secrets are lost (README, "Restoring")',
    ])
    // No secret was written in place of the lost one, and the lock was let go of.
    expect(existsSync(secretFile)).toBe(false)
    expect(readdirSync(directory).sort()).toEqual(['pglite'])

    renameSync(kept, secretFile)
    const restored = await startServer({ DATA_DIR: directory })
    expect(restored.output()).not.toMatch(/is not the one this database goes with/)
    restored.process.kill('SIGTERM')
    expect(await restored.exited).toBe(0)
  }, 120_000)

  it('with a TOLLGATE_SECRET ending in a newline: records none, stopping in one line; serves on a database set up with it, warning; npm run secret -- change moves to one without', async () => {
    // A secret file loaded with its newline (Kubernetes --from-file, systemd credentials).
    const padded = `${randomBytes(48).toString('base64')}\n`
    const clean = randomBytes(48).toString('base64')
    const database = await openDatabase({ dataDirectory, databaseUrl: undefined })
    try {
      await migrate(database)
      await database.query('DELETE FROM server_key_check')
      await database.close()
      // A database without a secret yet: the newline is not recorded.
      const refused = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
        env: { ...process.env, NODE_ENV: 'development', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDirectory, TOLLGATE_SECRET: padded },
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(refused.status).toBe(1)
      expect(refused.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/^tollgate: cannot start: TOLLGATE_SECRET begins or ends with white space, such as the newline .* Make the file without it \(`openssl rand -base64 48 \| tr -d '\\n' > secret`\)/),
      ])

      // A database a release before set up with it as it was.
      const setUp = await openDatabase({ dataDirectory, databaseUrl: undefined })
      try {
        expect(await readKeyCheck(setUp)).toBeUndefined()
        expect(await checkServerSecret(setUp, createKeyRing(padded), 'development')).toBe('recorded')
      } finally {
        await setUp.close()
      }
      const started = await startServer({ TOLLGATE_SECRET: padded })
      const warnings = started.output().split('\n').filter(isJson).map((line) => JSON.parse(line) as { level: number; msg: string }).filter((line) => line.level === 40)
      expect(warnings).toContainEqual(expect.objectContaining({
        msg: expect.stringMatching(/^TOLLGATE_SECRET begins or ends with white space .* this database was set up with it as it is, so it serves on\. .*npm run secret -- change/) as string,
      }))
      expect(started.output()).not.toMatch(/is not the one this database goes with/)
      started.process.kill('SIGTERM')
      expect(await started.exited).toBe(0)

      const changed = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/secret.ts', 'change'], {
        env: { ...process.env, NODE_ENV: 'development', DATA_DIR: dataDirectory, TOLLGATE_SECRET: padded, LOG_LEVEL: 'silent' },
        input: `${clean}\n`,
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(changed.status, changed.stderr).toBe(0)
      expect(changed.stdout).toMatch(/^the database now goes with the new secret/)
      const moved = await openDatabase({ dataDirectory, databaseUrl: undefined })
      try {
        expect(sameKeyCheck(await readKeyCheck(moved), createKeyRing(clean))).toBe(true)
      } finally {
        await moved.close()
      }
    } finally {
      // The next start records DATA_DIR/secret's again.
      const cleanup = await openDatabase({ dataDirectory, databaseUrl: undefined })
      await cleanup.query('DELETE FROM server_key_check')
      await cleanup.close()
    }
  }, 120_000)

  it.runIf(process.getuid?.() === 0)('names the files its user may not write when the embedded database cannot be opened, in one line', async () => {
    // A DATA_DIR restored as root for a service that runs as nobody: the directory was handed
    // over, the database's files inside were not.
    const restored = mkdtempSync(join(tmpdir(), 'tollgate-restored-'))
    const database = await openDatabase({ dataDirectory: restored, databaseUrl: undefined })
    await database.close()
    chownSync(restored, 65534, 65534)
    const started = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, NODE_ENV: 'development', PORT: '0', HOST: '127.0.0.1', DATA_DIR: restored, TOLLGATE_SECRET: 'a secret of more than thirty-two characters here' },
      uid: 65534,
      gid: 65534,
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(started.status).toBe(1)
    expect(started.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^tollgate: cannot start: the embedded database in ${restored}/pglite could not be opened \\(.*\\): ${restored}/pglite is not writable by this user; give DATA_DIR and everything in it to the user the server runs as$`)),
    ])
  }, 60_000)
})

import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config.js'
import { createScratchDatabase, runOn } from './helpers/scratch-database.js'
import { hasPostgres, postgresUrl } from './helpers/services.js'

describe('loadConfig', () => {
  it('defaults to development on port 3000 of this machine only, with the embedded stores', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      environment: 'development',
      databaseUrl: undefined,
      redisUrl: undefined,
      dataDirectory: './data',
      trustProxy: false,
      logLevel: 'info',
      logRequests: true,
      allowPrivateWebhooks: true,
      logRetentionDays: 92,
      signUps: 'open',
    })
  })

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://user@db:5432/tollgate',
      REDIS_URL: 'rediss://cache:6380',
      DATA_DIR: '/var/lib/tollgate',
      TOLLGATE_SECRET: 'x'.repeat(40),
      TRUST_PROXY: '10.0.0.0/8, 192.168.1.1',
      LOG_LEVEL: 'warn',
      LOG_REQUESTS: 'true',
      LOG_RETENTION_DAYS: '30',
      AUDIT_RETENTION_DAYS: '730',
      SIGNUPS: 'closed',
      METRICS_TOKEN: 'scrape-me-with-this-token',
      GATE_CLEARANCE_SECONDS: '86400',
      EPHEMERAL_IDS: 'false',
      SHUTDOWN_DELAY: '15000',
    })
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      environment: 'production',
      databaseUrl: 'postgres://user@db:5432/tollgate',
      redisUrl: 'rediss://cache:6380',
      dataDirectory: '/var/lib/tollgate',
      trustProxy: ['10.0.0.0/8', '192.168.1.1'],
      logLevel: 'warn',
      logRequests: true,
      allowPrivateWebhooks: false,
      logRetentionDays: 30,
      auditRetentionDays: 730,
      signUps: 'closed',
      metricsToken: 'scrape-me-with-this-token',
      gateClearanceSeconds: 86_400,
      ephemeralIds: false,
      shutdownDelayMs: 15_000,
    })
    expect(loadConfig({}).ephemeralIds).toBe(true)
    expect(loadConfig({ NODE_ENV: 'production', TOLLGATE_SECRET: 'x'.repeat(40) }).shutdownDelayMs).toBe(0)
    expect(loadConfig({ LOG_RETENTION_DAYS: '0' }).logRetentionDays).toBe(0)
    expect(loadConfig({}).auditRetentionDays).toBe(365)
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '0' }).auditRetentionDays).toBe(0)
    expect(loadConfig({}).metricsToken).toBeUndefined()
  })

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['NODE_ENV', 'staging'],
    ['DATABASE_URL', 'nonsense'],
    ['DATABASE_URL', 'mysql://db/x'],
    ['REDIS_URL', 'http://cache'],
    ['REDIS_URL', 'redis://cache:6379/abc'],
    ['REDIS_URL', 'redis://cache:6379/1/2'],
    ['REDIS_URL', 'redis://cache:6379?db=two'],
    ['REDIS_URL', 'redis://cache:6379?db=5&db=0'],
    ['REDIS_URL', 'redis://cache:6379/9?db=8'],
    ['TRUST_PROXY', '10.0.0.0/99'],
    ['LOG_LEVEL', 'loud'],
    ['LOG_REQUESTS', 'sometimes'],
    ['EPHEMERAL_IDS', 'maybe'],
    ['SHUTDOWN_DELAY', '5s'],
    ['SHUTDOWN_DELAY', '300001'],
    ['METRICS_TOKEN', 'short'],
    ['METRICS_TOKEN', 'a token with spaces in it'],
    ['TOLLGATE_SECRET', 'short'],
    ['LOG_RETENTION_DAYS', '-1'],
    ['LOG_RETENTION_DAYS', '7.5'],
    ['LOG_RETENTION_DAYS', '36501'],
    ['AUDIT_RETENTION_DAYS', 'a year'],
    ['SIGNUPS', 'invite'],
    ['LOG_CLIENT_IP', 'anonymized'],
    ['HOST', '999.1.1.1'],
    ['HOST', 'bogus_host'],
    ['HOST', 'http://0.0.0.0'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name} `))
  })

  it('reads SESSION_IDLE_TIMEOUT as a duration (3 days unless set), refusing one outside 5 minutes to 14 days', () => {
    expect(loadConfig({}).sessionIdleTimeoutMs).toBe(3 * 86_400_000)
    expect(loadConfig({ SESSION_IDLE_TIMEOUT: '12h' }).sessionIdleTimeoutMs).toBe(12 * 3_600_000)
    expect(loadConfig({ SESSION_IDLE_TIMEOUT: '90m' }).sessionIdleTimeoutMs).toBe(90 * 60_000)
    expect(loadConfig({ SESSION_IDLE_TIMEOUT: '3600' }).sessionIdleTimeoutMs).toBe(3_600_000)
    for (const refused of ['1m', '15d', 'three days', '-1d']) {
      expect(() => loadConfig({ SESSION_IDLE_TIMEOUT: refused }), refused).toThrow(/^SESSION_IDLE_TIMEOUT must be a duration from 5 minutes to 14 days/)
    }
  })

  it('lists the values a yes-or-no variable takes when it refuses one, and takes them in any letter case', () => {
    expect(() => loadConfig({ LOG_REQUESTS: 'sometimes' })).toThrow(
      new ConfigError('LOG_REQUESTS', 'must be 1, true or yes to turn it on, or 0, false or no to turn it off (got "sometimes")'),
    )
    for (const yes of ['1', 'true', 'YES']) expect(loadConfig({ EPHEMERAL_IDS: yes }).ephemeralIds).toBe(true)
    for (const no of ['0', 'False', 'no']) expect(loadConfig({ EPHEMERAL_IDS: no }).ephemeralIds).toBe(false)
  })

  it.each(['redis://cache:6379', 'redis://cache:6379/', 'redis://cache:6379/15', 'rediss://user:pass@cache:6380/2', 'redis://cache:6379?db=3', 'redis://cache:6379/3?db=3'])('takes REDIS_URL=%s', (url) => {
    expect(loadConfig({ REDIS_URL: url }).redisUrl).toBe(url)
  })

  it.each(['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost', 'tollgate.internal', 'web-1'])('listens on HOST=%s', (host) => {
    expect(loadConfig({ HOST: host }).host).toBe(host)
  })

  it('listens on every interface in production, and on this machine only elsewhere, unless HOST says', () => {
    const production = { NODE_ENV: 'production', TOLLGATE_SECRET: 'x'.repeat(40) }
    expect(loadConfig(production).host).toBe('0.0.0.0')
    expect(loadConfig({ NODE_ENV: 'test' }).host).toBe('127.0.0.1')
    expect(loadConfig({ HOST: '' }).host).toBe('127.0.0.1')
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0')
    expect(loadConfig({ ...production, HOST: '127.0.0.1' }).host).toBe('127.0.0.1')
  })

  it('keeps per-request log lines out of production unless LOG_REQUESTS turns them on', () => {
    const production = { NODE_ENV: 'production', TOLLGATE_SECRET: 'x'.repeat(40) }
    expect(loadConfig(production).logRequests).toBe(false)
    expect(loadConfig({ ...production, LOG_REQUESTS: 'true' }).logRequests).toBe(true)
    expect(loadConfig({ LOG_REQUESTS: 'false' }).logRequests).toBe(false)
  })

  it('lets only the first account sign up in production unless SIGNUPS says otherwise', () => {
    const production = { NODE_ENV: 'production', TOLLGATE_SECRET: 'x'.repeat(40) }
    expect(loadConfig(production).signUps).toBe('first')
    expect(loadConfig({ ...production, SIGNUPS: 'open' }).signUps).toBe('open')
    expect(loadConfig({ SIGNUPS: 'first' }).signUps).toBe('first')
  })

  it('takes a TOLLGATE_SECRET with a trailing newline as it is: a release before took it, and the database went with it', () => {
    // A file from `openssl rand -base64 48 > file`, loaded as Kubernetes --from-file or a systemd credential does: newline kept.
    const secret = `${randomBytes(48).toString('base64')}\n`
    expect(loadConfig({ NODE_ENV: 'production', TOLLGATE_SECRET: secret }).secret).toBe(secret)
    expect(() => loadConfig({ TOLLGATE_SECRET: ` ${'x'.repeat(20)}\n` })).toThrow(/^TOLLGATE_SECRET must be at least 32 characters/)
  })

  it('takes a Unix socket\'s DATABASE_URL, and names that form for one with the user before an empty host, which no URL parser takes', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres:///tg_ops?host=/tmp/sock&user=tg_ops' }).databaseUrl).toBe('postgres:///tg_ops?host=/tmp/sock&user=tg_ops')
    expect(() => loadConfig({ DATABASE_URL: 'postgres://tg_ops@/tg_ops?host=/tmp/sock' })).toThrow(
      new ConfigError('DATABASE_URL', 'must be a URL starting with postgres: or postgresql: (got an unparseable value; for a Unix socket, name the user in the query: postgres:///db?host=/run/postgresql&user=name)'),
    )
  })

  it('requires TOLLGATE_SECRET in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/^TOLLGATE_SECRET is required/)
  })
})

describe('the server process with a database it cannot use', () => {
  /** A port that accepts connections and never answers, as a firewall that drops packets or a stuck server. */
  let silent: net.Server
  let silentPort = 0
  const accepted = new Set<net.Socket>()
  beforeAll(async () => {
    silent = net.createServer((socket) => accepted.add(socket))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    silentPort = (silent.address() as net.AddressInfo).port
  })
  afterAll(async () => {
    for (const socket of accepted) socket.destroy()
    await new Promise<void>((resolve) => silent.close(() => resolve()))
  })

  it.skipIf(!hasPostgres).each([
    ['a server that never answers', () => `postgres://postgres@127.0.0.1:${silentPort}/test`, /Connection terminated due to connection timeout/],
    ['a role that does not exist', () => withRole(postgresUrl, 'no_such_role_here'), /role "no_such_role_here" does not exist/],
  ])('stops with one line on %s, exit 1', async (_case, url, cause) => {
    const result = await runServer({ DATABASE_URL: url() })
    expect(result.code).toBe(1)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^tollgate: cannot start: DATABASE_URL: PostgreSQL cannot be used: /)
    expect(lines[0]).toMatch(cause)
  }, 30_000)
})

describe.skipIf(!hasPostgres)('the server process with a role that cannot create tables', () => {
  it('stops with one line that says which right the role lacks, exit 1', async () => {
    const database = await createScratchDatabase('tollgate_norights')
    const role = `${database.name}_role`
    try {
      await database.run(`CREATE ROLE ${role} LOGIN`)
      // As PostgreSQL 15 and later have it for any role but the database's owner.
      await database.run('REVOKE CREATE ON SCHEMA public FROM PUBLIC')
      const result = await runServer({ DATABASE_URL: withRole(database.url, role) })
      expect(result.code).toBe(1)
      expect(result.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/^tollgate: cannot start: the database could not be prepared for its migrations: permission denied for schema public \(.*GRANT CREATE ON SCHEMA public/),
      ])
    } finally {
      await database.drop()
      await runOn(postgresUrl, `DROP ROLE IF EXISTS ${role}`)
    }
  }, 30_000)
})

function withRole(url: string, role: string): string {
  const parsed = new URL(url)
  parsed.username = role
  return parsed.href
}

/** The server process, asynchronously (a spawnSync would block the test's own silent server). */
function runServer(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, NODE_ENV: 'development', DATA_DIR: mkdtempSync(join(tmpdir(), 'tollgate-config-')), ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000)
    // 'close': the stderr lines are all read by then, as they may not be at 'exit'.
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stderr })
    })
  })
}

describe('the server process with a bad value', () => {
  it.each([
    ['PORT', 'abc'],
    ['DATABASE_URL', 'nonsense'],
  ])('%s=%s stops with one line naming it and a non-zero exit code', (name, value) => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, NODE_ENV: 'development', [name]: value },
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(result.status).not.toBe(0)
    expect(result.status).not.toBeNull()
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(new RegExp(`^tollgate: invalid configuration: ${name} `))
  })
})

describe('the server process with a data directory it cannot use', () => {
  it('stops with one line, exit 1, when DATA_DIR/secret is a directory', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tollgate-config-'))
    mkdirSync(join(dataDirectory, 'secret'))
    const result = await runServer({ DATA_DIR: dataDirectory })
    expect(result.code).toBe(1)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toEqual([expect.stringMatching(/^tollgate: cannot start: .*EISDIR/)])
  }, 30_000)
})

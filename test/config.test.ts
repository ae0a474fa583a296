import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config.js'

describe('loadConfig', () => {
  it('defaults to development on port 3000 with the embedded stores', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      port: 3000,
      environment: 'development',
      databaseUrl: undefined,
      redisUrl: undefined,
      dataDirectory: './data',
      trustProxy: false,
      logLevel: 'info',
      logRequests: true,
      allowPrivateWebhooks: true,
      logRetentionDays: 92,
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
    })
    expect(loadConfig({ LOG_RETENTION_DAYS: '0' }).logRetentionDays).toBe(0)
  })

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['NODE_ENV', 'staging'],
    ['DATABASE_URL', 'nonsense'],
    ['DATABASE_URL', 'mysql://db/x'],
    ['REDIS_URL', 'http://cache'],
    ['TRUST_PROXY', '10.0.0.0/99'],
    ['LOG_LEVEL', 'loud'],
    ['LOG_REQUESTS', 'sometimes'],
    ['TOLLGATE_SECRET', 'short'],
    ['LOG_RETENTION_DAYS', '-1'],
    ['LOG_RETENTION_DAYS', '7.5'],
    ['LOG_RETENTION_DAYS', '36501'],
    ['HOST', '999.1.1.1'],
    ['HOST', 'bogus_host'],
    ['HOST', 'http://0.0.0.0'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name} `))
  })

  it.each(['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost', 'tollgate.internal', 'web-1'])('listens on HOST=%s', (host) => {
    expect(loadConfig({ HOST: host }).host).toBe(host)
  })

  it('keeps per-request log lines out of production unless LOG_REQUESTS turns them on', () => {
    const production = { NODE_ENV: 'production', TOLLGATE_SECRET: 'x'.repeat(40) }
    expect(loadConfig(production).logRequests).toBe(false)
    expect(loadConfig({ ...production, LOG_REQUESTS: 'true' }).logRequests).toBe(true)
    expect(loadConfig({ LOG_REQUESTS: 'false' }).logRequests).toBe(false)
  })

  it('requires TOLLGATE_SECRET in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/^TOLLGATE_SECRET is required/)
  })
})

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

import { buildApp, type App } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { createKeyRing } from '../../src/secret.js'
import { hasPostgres, hasRedis } from './services.js'
import { openTestDatabase, openTestKeyValue, type DatabaseKind, type KeyValueKind } from './storage.js'

export const TEST_SECRET = 'test-secret-with-at-least-thirty-two-characters'

export interface TestAppOptions {
  database?: DatabaseKind
  keyValue?: KeyValueKind
  /** Environment variables as the service would read them (NODE_ENV defaults to test). */
  env?: Record<string, string>
  config?: Partial<Config>
  metricsFlushIntervalMs?: number
  webhookTimeoutMs?: number
  logRetentionIntervalMs?: number
  verificationLogMaxBufferedRows?: number
  requestTimeoutMs?: number
  surgeFlushIntervalMs?: number
  surgeTiming?: { windowMs: number; quietMs: number }
  /** Where the app's JSON log lines go (info and above); none by default. */
  logStream?: { write(line: string): void }
  /** Called before the app is ready: routes of the test's own, to force a failure. */
  beforeReady?: (app: App) => void
}

/** The two ways the service is deployed, for suites that run on each; the second where the services answer. */
export const deployments: { name: string; available: boolean; options: TestAppOptions }[] = [
  { name: 'embedded (PGlite, memory)', available: true, options: {} },
  { name: 'PostgreSQL and Redis', available: hasPostgres && hasRedis, options: { database: 'postgres', keyValue: 'redis' } },
]

export interface TestApp {
  app: App
  config: Config
  /** Redis's key prefix of this app's keys ('' on the in-process store). */
  keyPrefix: string
  /** Closes the app (flushing what it buffers) and removes the test's schema and keys; once. */
  close(): Promise<void>
}

/**
 * Builds the whole service on fresh storage, ready for `app.inject()`. Defaults to the embedded
 * stores; pass database: 'postgres' and keyValue: 'redis' for the real services.
 */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const config = { ...loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET, ...options.env }), ...options.config }
  const testDatabase = await openTestDatabase(options.database ?? 'pglite')
  const testKeyValue = await openTestKeyValue(options.keyValue ?? 'memory')
  const app = await buildApp({
    config,
    storage: { database: testDatabase.database, keyValue: testKeyValue.keyValue },
    keyRing: createKeyRing(config.secret ?? TEST_SECRET),
    logger: options.logStream === undefined ? false : { level: 'info', stream: options.logStream },
    metricsFlushIntervalMs: options.metricsFlushIntervalMs,
    webhookTimeoutMs: options.webhookTimeoutMs,
    logRetentionIntervalMs: options.logRetentionIntervalMs,
    verificationLogMaxBufferedRows: options.verificationLogMaxBufferedRows,
    requestTimeoutMs: options.requestTimeoutMs,
    surgeFlushIntervalMs: options.surgeFlushIntervalMs,
    surgeTiming: options.surgeTiming,
  })
  options.beforeReady?.(app)
  await app.ready()
  let closed: Promise<void> | undefined
  return {
    app,
    config,
    keyPrefix: testKeyValue.prefix,
    close() {
      closed ??= (async () => {
        await app.close()
        await Promise.all([testDatabase.dispose(), testKeyValue.dispose()])
      })()
      return closed
    },
  }
}

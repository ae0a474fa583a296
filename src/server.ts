import closeWithGrace from 'close-with-grace'
import { pino } from 'pino'
import { buildApp } from './app.js'
import { ConfigError, hasWhiteSpaceAtEnds, loadConfig, type Config } from './config.js'
import { WEBHOOK_TIMEOUT_MS } from './plugins/webhooks.js'
import { createKeyRing, findSecret, resolveSecret, storedSecretFile } from './secret.js'
import { StartupError } from './startup-error.js'
import { findUnknownMigrations } from './storage/migrate.js'
import { openStorage } from './storage/open-storage.js'
import { checkServerSecret, refuseToGenerateSecret, WHITE_SPACE_CAUSE } from './storage/sql/server-key-check.js'

function readConfigOrExit(): Config {
  try {
    return loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`tollgate: invalid configuration: ${error.message}\n`)
      process.exit(78) // EX_CONFIG
    }
    throw error
  }
}

/**
 * Failures an operator mends outside the code (a data directory in use, a database or address
 * that does not answer, a file where a directory should be or the other way round): one line naming the cause, exit 1.
 * Anything else is a bug and keeps its stack.
 */
const operationalCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EADDRINUSE', 'EADDRNOTAVAIL', 'EACCES', 'EPERM', 'ENOTDIR', 'EROFS', 'ENOSPC', 'EISDIR'])
async function orExit<T>(what: string, work: () => Promise<T>, release: () => Promise<unknown> = async () => undefined): Promise<T> {
  try {
    return await work()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // A database's refusal (SQLSTATE: five characters with a digit, unlike errno's), such as a
    // schema that is not what this version expects: one line naming it, not a driver's stack.
    const isSqlState = typeof code === 'string' && /^(?=.*\d)[0-9A-Z]{5}$/.test(code)
    if (error instanceof StartupError || isSqlState || (code !== undefined && operationalCodes.has(code))) {
      const cause = error instanceof StartupError
        ? error.message
        : `${what}: ${(error as Error).message}${isSqlState ? ` (SQLSTATE ${code})` : ''}`
      process.stderr.write(`tollgate: cannot start: ${cause}\n`)
      // What the start had opened is let go of: DATA_DIR's lock is removed rather than left with
      // the pid of a process that is gone (the next start would take it over, but an operator
      // looking at DATA_DIR would wonder).
      await release().catch(() => undefined)
      process.exit(1)
    }
    // A bug keeps its stack, and lets go of what the start had opened all the same.
    await release().catch(() => undefined)
    throw error
  }
}

const config = readConfigOrExit()
const secretWhere = `the secret in DATA_DIR ${config.dataDirectory}`
const foundSecret = await orExit(secretWhere, () => findSecret(config))
const storage = await orExit(config.databaseUrl === undefined ? `the embedded database in DATA_DIR ${config.dataDirectory}` : 'DATABASE_URL', () => openStorage(config))
const closeStorage = () => Promise.allSettled([storage.database.close(), storage.keyValue.close()])
// Without one (development and test: config refuses production), a secret is generated into
// DATA_DIR, but not for a database that holds secrets sealed under another (a restore without
// DATA_DIR/secret): that start stops instead, and the file stays unwritten for the right one.
const secret = foundSecret ?? (await orExit(secretWhere, async () => {
  await refuseToGenerateSecret(storage.database, storedSecretFile(config.dataDirectory))
  return resolveSecret(config)
}, closeStorage))
const keyRing = createKeyRing(secret)
// Only TOLLGATE_SECRET can have it (DATA_DIR/secret is read trimmed): releases before took it as it was.
const whiteSpaceAtEnds = hasWhiteSpaceAtEnds(secret)
const secretCheck = await orExit('checking the secret against the database', () => checkServerSecret(storage.database, keyRing, config.environment, { whiteSpaceAtEnds }), closeStorage)
// Log lines go to stdout as they are logged. pino's default stream writes in the background, and
// an exit (the shutdown's last step) lost the line in flight: often the last, which says why the
// exit code is 1. Written at once, a line costs one write(2): the service logs little (each request only
// with LOG_REQUESTS, which production leaves off), and a reader that falls behind slows it rather than
// letting lines pile up in memory.
const logStream = pino.destination({ dest: 1, sync: true })
const app = await orExit('building the service', () => buildApp({ config, storage, keyRing, logger: { level: config.logLevel, stream: logStream } }), closeStorage)
const forgetfulness = await storage.keyValue.findForgetfulness?.()
if (forgetfulness !== undefined) app.log.warn(forgetfulness)
const unknownMigrations = (await orExit('reading the migrations the database has applied', () => findUnknownMigrations(storage.database), () => app.close())).map(({ version, name }) => `${String(version).padStart(3, '0')}_${name}`)
if (unknownMigrations.length > 0) {
  app.log.warn(
    { unknownMigrations },
    `the database has migrations this release does not know (${unknownMigrations.join(', ')}): a newer release applied them. ` +
      'Serving on (migrations are additive, so an older release works on the newer schema); see the README, "Upgrading and rolling back"',
  )
}
if (config.environment === 'production' && config.publicUrl === undefined) {
  // Kept for development (any host name works there); requests are not refused.
  app.log.warn(
    'PUBLIC_URL is not set: passkeys, invitation links (and the CSRF checks) take the origin from each request, so a passkey is bound to whatever host name ' +
      'the request arrives with (its Host header), and an invitation made through a proxy that rewrites Host, or by a script calling an internal address, ' +
      'links to that host. Set PUBLIC_URL to the dashboard\'s public origin (https://tollgate.example.com)',
  )
}
if (config.environment === 'production' && config.metricsToken === undefined) {
  app.log.warn(
    'METRICS_TOKEN is not set: /metrics answers anyone who can reach it (request counts and timings, verdicts per site). ' +
      'Set METRICS_TOKEN to a random string of 16 characters or more, which Prometheus then sends as a bearer token, or keep /metrics off the public network',
  )
}
if (secretCheck === 'replaced') {
  app.log.warn(
    'a development or test start had recorded another secret for this database (one pointed at it before production started on it); ' +
      "this production start's secret replaces it. No webhook or authenticator secret was sealed under that one (a start stops when some are): " +
      'challenges and tokens it issued are refused from now on',
  )
}
if (secretCheck === 'differs') {
  app.log.warn(
    'the secret (TOLLGATE_SECRET, or DATA_DIR/secret) is not the one this database goes with: instances with the other one refuse ' +
      "this one's challenges and tokens, and webhook secrets set under the other cannot be decrypted here. In production this " +
      `start would have stopped; npm run secret -- adopt makes this secret the database's${whiteSpaceAtEnds ? `. ${WHITE_SPACE_CAUSE}` : ''}`,
  )
}
if (secretCheck === 'matches' && whiteSpaceAtEnds) {
  app.log.warn(
    'TOLLGATE_SECRET begins or ends with white space (a secret file\'s newline, kept by Kubernetes --from-file and systemd credentials); ' +
      'this database was set up with it as it is, so it serves on. To move to a secret without: stop every instance, run ' +
      "npm run secret -- change with a new one (`openssl rand -base64 48 | tr -d '\\n'`), then start them with it (README, \"Changing TOLLGATE_SECRET\")",
  )
}

// On SIGTERM or SIGINT: stop accepting, let in-flight requests finish, flush counters and logs,
// close the pools, then exit 0 (1 when the database could not take the counters or logs). Past SHUTDOWN_GRACE_MS (a webhook delivery may wait its whole
// timeout) it exits 1 at once; so does a further signal sent once the first is REPEAT_WINDOW_MS old.
// A signal repeated within that window is the same stop arriving twice: sent to the whole
// process group (systemd, timeout(1), kill -- -PGID, a terminal's Ctrl-C), it reaches this
// process both directly and through npm, which forwards it.
const SHUTDOWN_GRACE_MS = WEBHOOK_TIMEOUT_MS + 5_000
const REPEAT_WINDOW_MS = 2_000
/** What close-with-grace reports itself (a timeout, a failed shutdown) goes to the log as a JSON line too. */
const shutdownLogger = {
  error: (report: unknown) => (report instanceof Error ? app.log.error({ err: report }, report.message) : app.log.error(String(report))),
}
// SHUTDOWN_DELAY comes first on a signal: serving on while /ready answers 503 and answers close
// their connections, so that a load balancer moves the traffic away before the listener closes.
const graceful = closeWithGrace({ delay: SHUTDOWN_GRACE_MS + config.shutdownDelayMs, skip: ['SIGTERM', 'SIGINT'], logger: shutdownLogger }, async ({ signal, err }) => {
  if (err !== undefined) app.log.error({ err }, 'shutting down after an error')
  else if (signal !== undefined) app.log.info({ signal }, 'shutting down')
  if (err === undefined && config.shutdownDelayMs > 0) {
    app.log.info({ shutdownDelayMs: config.shutdownDelayMs }, `draining: /ready answers 503 and connections close after their answer; the listener closes in ${config.shutdownDelayMs} ms`)
    await app.drain(config.shutdownDelayMs)
  }
  await app.close()
  // Logged where it happened; the exit code tells a supervisor that data was lost.
  if (app.unwrittenAtShutdown.length > 0) throw new Error(`unwritten at shutdown: ${app.unwrittenAtShutdown.join(', ')}`)
  // The last line of a stop that lost nothing, so that a log tells a finished shutdown from a killed one.
  app.log.info({ written: app.writtenAtShutdown }, 'stopped')
})
let firstStopAt: number | undefined
const onStop = (signal: NodeJS.Signals) => {
  if (firstStopAt === undefined) {
    firstStopAt = Date.now()
    app.log.info({ signal }, 'shutting down')
    void graceful.close()
  } else if (Date.now() - firstStopAt >= REPEAT_WINDOW_MS) {
    app.log.error({ signal }, 'second signal: exiting without finishing the shutdown')
    process.exit(1)
  }
}
process.on('SIGTERM', onStop)
process.on('SIGINT', onStop)

await orExit(`listening on HOST ${config.host}, PORT ${config.port}`, () => app.listen({ port: config.port, host: config.host }), () => app.close())
const address = app.server.address()
// The port bound, which PORT=0 leaves to the system.
// localhost when it listens on every address or on the loopback; else the one address it listens on,
// which is the one a browser can reach it at.
const listensLocally = ['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost'].includes(config.host)
const servedHost = listensLocally ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host
const servedAt = `http://${servedHost}:${typeof address === 'object' && address !== null ? address.port : config.port}`
app.log.info({ database: storage.database.kind, keyValue: storage.keyValue.kind, environment: config.environment }, `Tollgate is serving on ${servedAt}`)
// Whoever ran npm start in a terminal is looking for the demo site's keys, which the JSON lines
// bury: they are told again in plain text. A log pipeline (no terminal) gets the JSON lines only,
// and LOG_LEVEL=silent nothing.
if (app.demoSite !== undefined && process.stdout.isTTY && config.logLevel !== 'silent') {
  logStream.write(
    [
      '',
      `  Tollgate (development) is serving on ${servedAt}`,
      '',
      `  Demo site     ${servedAt}/demo`,
      `    site key    ${app.demoSite.siteKey}`,
      `    secret key  ${app.demoSite.secretKey}`,
      `  Dashboard     ${servedAt}/dashboard`,
      `  API docs      ${servedAt}/docs`,
      '',
      '',
    ].join('\n'),
  )
}
if (config.environment === 'production') {
  // Each embedded store ties the service to one process, for its own reasons: name only those in use.
  const reasons: string[] = []
  const settings: string[] = []
  if (storage.database.kind === 'pglite') {
    reasons.push('the embedded database in DATA_DIR opens in one process only')
    settings.push('DATABASE_URL')
  }
  if (storage.keyValue.kind === 'memory') {
    reasons.push('challenges, single-use tokens, rate limits and history live in this process and are forgotten with it')
    settings.push('REDIS_URL')
  }
  if (reasons.length > 0) {
    app.log.warn(`production on embedded storage, so this must be the only instance: ${reasons.join('; ')}. To run several, set ${settings.join(' and ')}`)
  }
}

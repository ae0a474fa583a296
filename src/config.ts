import { isIP } from 'node:net'
import { clientIpLogModes, type ClientIpLogMode } from './domain/network/address-forms.js'

/**
 * The service's configuration, read once from the environment (DESIGN section 8).
 * Every variable is validated here so that a bad value stops the process at start
 * with one line naming the variable, instead of failing later on a request.
 */
export interface Config {
  port: number
  host: string
  environment: 'development' | 'test' | 'production'
  databaseUrl: string | undefined
  redisUrl: string | undefined
  dataDirectory: string
  /** Raw key material; undefined means "generate and keep one in dataDirectory" (not allowed in production). */
  secret: string | undefined
  /** Proxies whose X-Forwarded-For is honoured: false, true (any), a hop count, or addresses/CIDRs. */
  trustProxy: boolean | number | string[]
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  /** Whether every request writes its two access-log lines (errors are logged either way). */
  logRequests: boolean
  /** The service's own public origin, for CSRF checks behind proxies; derived from Host when unset. */
  publicUrl: string | undefined
  /** Whether webhook URLs may point at private, loopback or link-local addresses. */
  allowPrivateWebhooks: boolean
  /** Requests per minute per client IP, site and public route (challenge, verify); 0 turns the limit off. */
  rateLimitPerMinute: number
  /** Days the verification log keeps a row (client address, user agent, verdict); 0 keeps rows for ever. */
  logRetentionDays: number
  /** How the verification log keeps a visitor's address: as it is, or its /24 (IPv4) or /48 (IPv6) network (docs/privacy.md). */
  logClientIp: ClientIpLogMode
  /** Days the audit log keeps an event (who changed what, from which address); 0 keeps events for ever. */
  auditRetentionDays: number
  /** Who may sign up: anyone, only the first account (while none exists), or no one. */
  signUps: SignUpPolicy
  /** When set, /metrics answers only requests that carry it as a bearer token. */
  metricsToken: string | undefined
  /** SHUTDOWN_DELAY: milliseconds from SIGTERM to the listener's close, serving on while /ready answers 503 (draining). */
  shutdownDelayMs: number
  /** How long the gate's clearance cookie lets a browser through (docs/gate.md), in seconds. */
  gateClearanceSeconds: number
  /** Whether tokens carry the device's ephemeral id for Siteverify (docs/core-flow.md, section 6). */
  ephemeralIds: boolean
  /** How long a dashboard session may go unused before it ends, in milliseconds (it ends after 14 days whatever its use). */
  sessionIdleTimeoutMs: number
}

export const signUpPolicies = ['open', 'first', 'closed'] as const
export type SignUpPolicy = (typeof signUpPolicies)[number]

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable} ${problem}`)
    this.name = 'ConfigError'
  }
}

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
const environments = ['development', 'test', 'production'] as const

type Environment = Record<string, string | undefined>

function readInteger(env: Environment, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max} (got ${JSON.stringify(raw)})`)
  }
  return Number(raw)
}

const durationUnits: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** A duration such as 3d, 12h, 90m or 3600s (a bare number is seconds), in milliseconds, from min to max. */
function readDuration(env: Environment, name: string, fallbackMs: number, minMs: number, maxMs: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallbackMs
  const match = /^(\d{1,9})([smhd]?)$/.exec(raw.trim())
  const ms = match === null ? Number.NaN : Number(match[1]) * (durationUnits[match[2] || 's'] ?? Number.NaN)
  if (!(ms >= minMs && ms <= maxMs)) {
    throw new ConfigError(name, `must be a duration from ${minMs / 60_000} minutes to ${maxMs / 86_400_000} days, such as 3d, 12h or 90m (got ${JSON.stringify(raw)})`)
  }
  return ms
}

function readChoice<T extends string>(env: Environment, name: string, choices: readonly T[], fallback: T): T {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!(choices as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${choices.join(', ')} (got ${JSON.stringify(raw)})`)
  }
  return raw as T
}

function readUrl(env: Environment, name: string, protocols: string[]): string | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    // A user before an empty host (postgres://user@/db?host=/run/postgresql) is no URL to a parser.
    const socketHint = /^[a-z]+:\/\/[^/]*@\//i.test(raw) ? '; for a Unix socket, name the user in the query: postgres:///db?host=/run/postgresql&user=name' : ''
    throw new ConfigError(name, `must be a URL starting with ${protocols.join(' or ')} (got an unparseable value${socketHint})`)
  }
  if (!protocols.includes(url.protocol) || url.hostname === '' && !url.searchParams.has('host')) {
    throw new ConfigError(name, `must be a URL starting with ${protocols.join(' or ')}`)
  }
  return raw
}

/** A Redis URL whose path, if any, is a database number (redis://host:6379/2), as the client reads it. */
function readRedisUrl(env: Environment): string | undefined {
  const url = readUrl(env, 'REDIS_URL', ['redis:', 'rediss:'])
  if (url !== undefined && !/^\/?\d{0,6}$/.test(new URL(url).pathname)) {
    throw new ConfigError('REDIS_URL', `may end in a database number such as /0, and nothing else (got the path ${JSON.stringify(new URL(url).pathname)})`)
  }
  // The client also takes the database from ?db= when the path names none.
  const dbs = url === undefined ? [] : new URL(url).searchParams.getAll('db')
  if (dbs.length > 1) throw new ConfigError('REDIS_URL', 'names ?db= more than once')
  const [db] = dbs
  if (db !== undefined && !/^\d{1,6}$/.test(db)) throw new ConfigError('REDIS_URL', `?db= must be a database number (got ${JSON.stringify(db)})`)
  const pathDatabase = url === undefined ? '' : new URL(url).pathname.slice(1)
  if (db !== undefined && pathDatabase !== '' && Number(db) !== Number(pathDatabase)) {
    throw new ConfigError('REDIS_URL', `names two databases, ${pathDatabase} in its path and ${db} in ?db=; name one`)
  }
  return url
}

function readBoolean(env: Environment, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true
  if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false
  throw new ConfigError(name, `must be 1, true or yes to turn it on, or 0, false or no to turn it off (got ${JSON.stringify(raw)})`)
}

function readTrustProxy(env: Environment): Config['trustProxy'] {
  const raw = env.TRUST_PROXY?.trim()
  if (raw === undefined || raw === '' || raw === 'false') return false
  if (raw === 'true') return true
  if (/^\d+$/.test(raw)) return Number(raw)
  const entries = raw.split(',').map((entry) => entry.trim())
  for (const entry of entries) {
    const [address, prefix] = entry.split('/')
    const family = isIP(address ?? '')
    const maxPrefix = family === 6 ? 128 : 32
    if (family === 0 || (prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= maxPrefix))) {
      throw new ConfigError('TRUST_PROXY', `must be true, false, a hop count, or a comma-separated list of IP addresses or CIDRs (got ${JSON.stringify(entry)})`)
    }
  }
  return entries
}

/**
 * An IP address to listen on, or a host name to resolve (`localhost`, a container's name). Unset,
 * production listens on every interface (behind its proxy, in its container); anywhere else only
 * this machine may connect: a development server has open sign-ups, /docs and an open /metrics,
 * and its quick start says http://localhost:3000.
 */
function readHost(env: Environment, environment: Config['environment']): string {
  const raw = env.HOST
  if (raw === undefined || raw === '') return environment === 'production' ? '0.0.0.0' : '127.0.0.1'
  const isHostName = raw.length <= 253 && /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)(?:\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*$/.test(raw) && !/^[\d.]+$/.test(raw)
  if (isIP(raw) === 0 && !isHostName) {
    throw new ConfigError('HOST', `must be an IP address or a host name to listen on (got ${JSON.stringify(raw)})`)
  }
  return raw
}

/** The least TOLLGATE_SECRET may hold, in characters. */
export const MIN_SECRET_LENGTH = 32

/** Whether `secret` begins or ends with white space, such as the newline that ends a secret file. */
export function hasWhiteSpaceAtEnds(secret: string): boolean {
  return secret.trim() !== secret
}

/**
 * Why a value cannot be a new TOLLGATE_SECRET, if it cannot (npm run secret -- change asks it):
 * too short, or with white space at either end. A file from `openssl rand -base64 48 > file` ends
 * in a newline, which a shell's $(cat file) drops but Kubernetes' --from-file and systemd's
 * credentials keep: the server would derive other keys from the same file than the shell did.
 * The current secret is held only to the length: releases before took one with white space, and
 * the database went with it (the start tells, see checkServerSecret).
 */
export function secretProblemOf(secret: string): string | undefined {
  if (secret.length < MIN_SECRET_LENGTH) return `must be at least ${MIN_SECRET_LENGTH} characters of random key material`
  if (hasWhiteSpaceAtEnds(secret)) {
    return 'may not begin or end with white space, such as the newline that ends a file made by `openssl rand -base64 48 > secret` ' +
      '(Kubernetes --from-file and systemd credentials keep it): strip it (`printf %s "$(cat secret)" > secret.new`, then use secret.new)'
  }
  return undefined
}

export function loadConfig(env: Environment = process.env): Config {
  const environment = readChoice(env, 'NODE_ENV', environments, 'development')
  const secret = env.TOLLGATE_SECRET === '' ? undefined : env.TOLLGATE_SECRET
  if (secret !== undefined && secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError('TOLLGATE_SECRET', `must be at least ${MIN_SECRET_LENGTH} characters of random key material`)
  }
  if (secret === undefined && environment === 'production') {
    throw new ConfigError('TOLLGATE_SECRET', 'is required when NODE_ENV=production (at least 32 random characters)')
  }
  const publicUrl = readUrl(env, 'PUBLIC_URL', ['http:', 'https:'])
  return {
    port: readInteger(env, 'PORT', 3000, 0, 65535),
    host: readHost(env, environment),
    environment,
    databaseUrl: readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: readRedisUrl(env),
    dataDirectory: env.DATA_DIR === undefined || env.DATA_DIR === '' ? './data' : env.DATA_DIR,
    secret,
    trustProxy: readTrustProxy(env),
    logLevel: readChoice(env, 'LOG_LEVEL', logLevels, environment === 'test' ? 'silent' : 'info'),
    // Off in production: two JSON lines per request cost about a quarter of the challenge route's
    // throughput (bench/README.md), and /metrics already counts and times every route.
    logRequests: readBoolean(env, 'LOG_REQUESTS', environment !== 'production'),
    publicUrl: publicUrl === undefined ? undefined : new URL(publicUrl).origin,
    allowPrivateWebhooks: readBoolean(env, 'WEBHOOK_ALLOW_PRIVATE', environment !== 'production'),
    rateLimitPerMinute: readInteger(env, 'RATE_LIMIT_PER_MINUTE', 120, 0, 1_000_000),
    // The longest range the dashboard's stats show (92 daily buckets), so every range it offers is whole.
    logRetentionDays: readInteger(env, 'LOG_RETENTION_DAYS', 92, 0, 36_500),
    logClientIp: readChoice(env, 'LOG_CLIENT_IP', clientIpLogModes, 'full'),
    // A year: an incident found late (a key that leaked months ago) can still be traced.
    auditRetentionDays: readInteger(env, 'AUDIT_RETENTION_DAYS', 365, 0, 36_500),
    // A production server reachable from anywhere should not let anyone make an account (and
    // sites on it); its operator makes the first one.
    signUps: readChoice(env, 'SIGNUPS', signUpPolicies, environment === 'production' ? 'first' : 'open'),
    metricsToken: readMetricsToken(env),
    gateClearanceSeconds: readInteger(env, 'GATE_CLEARANCE_SECONDS', 3600, 60, 604_800),
    // Off for the rolling upgrade from a version without them: those versions refuse tokens that carry one.
    ephemeralIds: readBoolean(env, 'EPHEMERAL_IDS', true),
    // 0 by default: a single instance has nowhere to send the traffic, and `docker stop` kills after
    // 10 s. Behind a load balancer, a few seconds longer than its health check's interval.
    shutdownDelayMs: readInteger(env, 'SHUTDOWN_DELAY', 0, 0, 300_000),
    // A session left logged in on a machine no longer used (or copied from it) ends within days,
    // not at the end of its 14; up to the lifetime itself, which turns the idle limit off.
    sessionIdleTimeoutMs: readDuration(env, 'SESSION_IDLE_TIMEOUT', 3 * 86_400_000, 5 * 60_000, 14 * 86_400_000),
  }
}

const MIN_METRICS_TOKEN_LENGTH = 16

function readMetricsToken(env: Environment): string | undefined {
  const token = env.METRICS_TOKEN
  if (token === undefined || token === '') return undefined
  if (token.length < MIN_METRICS_TOKEN_LENGTH || /\s/.test(token)) {
    throw new ConfigError('METRICS_TOKEN', `must be at least ${MIN_METRICS_TOKEN_LENGTH} characters without spaces (a random string; Prometheus sends it as a bearer token)`)
  }
  return token
}

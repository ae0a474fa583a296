/**
 * A store's refusal whose message names its cause for the operator, and nothing else (no host, no
 * credential): /ready shows it, where any other failure reads "not reachable".
 */
export class DependencyRefusal extends Error {}

/**
 * Redis's reply errors that mean it refuses commands for now, not that the request was wrong: the
 * requests that need it answer 503, and /ready says which.
 */
const redisRefusals: Record<string, string> = {
  OOM: 'refuses writes: it is at its maxmemory (OOM)',
  READONLY: 'refuses writes: a read-only replica (READONLY); REDIS_URL must name the primary',
  MISCONF: 'refuses writes: it cannot save its snapshot (MISCONF)',
  LOADING: 'loading its data set (LOADING)',
  MASTERDOWN: 'a replica whose primary is away (MASTERDOWN)',
  BUSY: 'busy running a script (BUSY)',
  NOAUTH: 'authentication failed (NOAUTH): REDIS_URL names no password, or not the one this server wants',
  WRONGPASS: 'authentication failed (WRONGPASS): the user or password in REDIS_URL is refused',
}

/** The refusal a Redis reply error means, or undefined for any other error. */
export function redisRefusalOf(error: unknown): DependencyRefusal | undefined {
  if (!(error instanceof Error)) return undefined
  const reason = redisRefusals[/^[A-Z]+/.exec(error.message)?.[0] ?? '']
  return reason === undefined ? undefined : new DependencyRefusal(reason)
}

const POSTGRES_READ_ONLY = 'refuses writes: read-only (a standby, or default_transaction_read_only on)'

/** A PostgreSQL that answers but takes no writes. */
export function readOnlyDatabase(): DependencyRefusal {
  return new DependencyRefusal(POSTGRES_READ_ONLY)
}

/** PostgreSQL's SQLSTATEs that mean it refuses this service's statements for now (see redisRefusals). */
const postgresRefusals: Record<string, string> = {
  '25006': POSTGRES_READ_ONLY,
  '28P01': 'authentication failed: the password in DATABASE_URL is refused',
  '28000': 'authentication failed: DATABASE_URL names a role this server refuses',
}

/** The refusal a PostgreSQL error means, or undefined for any other error. */
export function postgresRefusalOf(error: unknown): DependencyRefusal | undefined {
  const reason = postgresRefusals[String((error as { code?: unknown } | null)?.code)]
  // PostgreSQL's own words (they name the role) go with it as its cause, for the start's one line.
  return reason === undefined ? undefined : new DependencyRefusal(reason, { cause: error })
}

const failedStore = Symbol('tollgate.failedStore')

/**
 * Marks an error as thrown by a store's client, so that a failure the error does not itself name
 * (a refused or reset connection: an errno, the same from either store) is logged with the store
 * that failed. Returns the error, for `throw markStoreFailure(error, 'PostgreSQL')`.
 */
export function markStoreFailure(error: unknown, store: 'PostgreSQL' | 'Redis'): unknown {
  if (error instanceof Error && !Object.hasOwn(error, failedStore)) Object.defineProperty(error, failedStore, { value: store })
  return error
}

/** The store markStoreFailure marked the error with, if any. */
export function storeFailureOf(error: Error): 'PostgreSQL' | 'Redis' | undefined {
  return (error as Error & { [failedStore]?: 'PostgreSQL' | 'Redis' })[failedStore]
}

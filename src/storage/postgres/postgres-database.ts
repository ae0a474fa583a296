import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { markStoreFailure, postgresRefusalOf, readOnlyDatabase } from '../dependency-refusal.js'
import type { BulkColumn, BulkLoad, SqlDatabase, SqlExecutor } from '../ports.js'
import { quoteIdentifier } from '../quote-identifier.js'

const INT8_OID = 20
const NUMERIC_OID = 1700

/** Parse int8 and numeric as numbers, as PGlite is configured to, so both behave alike. */
const numericTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value)
    return pg.types.getTypeParser(oid, format) as (value: string) => unknown
  }) as pg.CustomTypesConfig['getTypeParser'],
}

export interface PostgresOptions {
  connectionString: string
  /** Use (and create) this schema instead of public: lets test suites share one database. */
  schema?: string
  maxConnections?: number
  /**
   * The longest a statement may run before PostgreSQL cancels it (SQLSTATE 57014, answered 503):
   * a statement stuck behind a lock or a runaway plan must not hold a request and a connection
   * for ever. Migrations lift it for their own transaction. Default 30 s.
   */
  statementTimeoutMs?: number
}

/** Joins the elements of a text[] value when no element holds it (nor is empty: string_to_array drops those). */
const ELEMENT_SEPARATOR = '\u001f'

/** A text[] value as PostgreSQL's array literal, each element quoted. */
function arrayLiteralOf(items: readonly string[]): string {
  return `{${items.map((item) => `"${item.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`
}

/**
 * How a bulk load sends a text[] column: each value as its elements joined by a separator none of
 * them holds (cheap for pg to send: it escapes every element of an array parameter, and a literal
 * is all quotes), or, when some element holds it or is empty, as array literals.
 */
function textArrayColumn(values: readonly unknown[], field: string): { read: string; values: unknown[] } {
  const isJoinable = values.every((value) => !Array.isArray(value) || (value as string[]).every((item) => item !== '' && !item.includes(ELEMENT_SEPARATOR)))
  if (isJoinable) {
    return { read: `string_to_array(${field}, E'\\x1f')`, values: values.map((value) => (Array.isArray(value) ? value.join(ELEMENT_SEPARATOR) : value)) }
  }
  return { read: `${field}::text[]`, values: values.map((value) => (Array.isArray(value) ? arrayLiteralOf(value as string[]) : value)) }
}

/** The parameter type of each column of a bulk load, and how its unnested field (`field`) becomes the column's value. */
const bulkForms: Record<Exclude<BulkColumn['type'], 'text[]'>, { type: string; read?: (field: string) => string }> = {
  uuid: { type: 'uuid[]' },
  text: { type: 'text[]' },
  int2: { type: 'smallint[]' },
  int4: { type: 'integer[]' },
  // Unix milliseconds, in integer arithmetic (no rounding through a double).
  timestamptz: { type: 'bigint[]', read: (field) => `timestamptz 'epoch' + ${field} * interval '1 millisecond'` },
}

/** How one column of a bulk load travels: its parameter's type, the read of its unnested field, its values. */
function bulkColumnOf(type: BulkColumn['type'], values: readonly unknown[], field: string): { type: string; read: string; values: readonly unknown[] } {
  if (type === 'text[]') return { type: 'text[]', ...textArrayColumn(values, field) }
  const form = bulkForms[type]
  return { type: form.type, read: form.read?.(field) ?? field, values }
}

/**
 * A bulk load as one INSERT of the unnested parameter arrays, one per column: a statement of as
 * many parameters as columns, whatever the number of rows. (unnest() would flatten an array of
 * arrays, so text[] values travel as text: see textArrayColumn.)
 */
function bulkInsertOf(load: BulkLoad, firstParameter = 1): { text: string; values: unknown[] } {
  const columns = load.columns.map((column) => quoteIdentifier(column.name)).join(', ')
  const fields = load.columns.map((_, index) => `field${index}`)
  const forms = load.columns.map((column, index) => bulkColumnOf(column.type, load.values[index] ?? [], fields[index]!))
  const parameters = forms.map((form, index) => `$${firstParameter + index}::${form.type}`)
  const reads = forms.map((form) => form.read)
  return {
    text: `INSERT INTO ${quoteIdentifier(load.table)} (${columns}) SELECT ${reads.join(', ')} FROM unnest(${parameters.join(', ')}) AS batch (${fields.join(', ')})`,
    values: forms.map((form) => form.values),
  }
}

/** The longest setTimeout takes: "no limit" for a statement of a migration. */
const UNBOUNDED_MS = 2 ** 31 - 1

/** How long close() waits for the connections to end before it gives up on those still held. */
const CLOSE_TIMEOUT_MS = 2_000

/** A lost connection is reported by the statement that needed it (an outage: 503); the event itself is not. */
function ignoreLostConnection(): void {}

export async function openPostgresDatabase(options: PostgresOptions): Promise<SqlDatabase> {
  const statementTimeoutMs = options.statementTimeoutMs ?? 30_000
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    types: numericTypes,
    connectionTimeoutMillis: 5_000,
    statement_timeout: statementTimeoutMs,
    // A connection whose packets vanish (a failover, a dropped route) gets no answer and no reset:
    // the client stops waiting a little after the server would have canceled the statement, and
    // the connection is dropped from the pool, so the service recovers once the server answers
    // again instead of after the kernel's TCP timeout (a quarter of an hour). Keep-alive probes
    // find idle ones.
    ...(statementTimeoutMs > 0 ? { query_timeout: statementTimeoutMs + 5_000 } : {}),
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` }),
  })
  // An idle client that loses its connection emits here; without a listener the process would crash.
  pool.on('error', ignoreLostConnection)
  let closing: Promise<void> | undefined
  if (options.schema !== undefined) {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(options.schema)}`)
  }

  const executorOf = (client: pg.Pool | pg.PoolClient, isUnbounded = false): SqlExecutor => ({
    async query<Row extends object>(sql: string, params: readonly unknown[] = []) {
      // query_timeout per query is read by pg but missing from its types.
      const query: pg.QueryConfig = isUnbounded
        ? ({ text: sql, values: params as unknown[], query_timeout: UNBOUNDED_MS } as pg.QueryConfig)
        : { text: sql, values: params as unknown[] }
      try {
        const result = await client.query<Row>(query)
        return result.rows
      } catch (error) {
        throw markStoreFailure(error, 'PostgreSQL')
      }
    },
  })

  const transaction: SqlDatabase['transaction'] = async (work, transactionOptions) => {
    const client = await pool.connect().catch((error: unknown) => {
      throw markStoreFailure(error, 'PostgreSQL')
    })
    // pg-pool listens for a lost connection only while the client is idle in the pool: checked
    // out, the client's 'error' event (PostgreSQL restarting or ending the backend) would have
    // no listener and end the process. The transaction's next statement fails instead.
    client.on('error', ignoreLostConnection)
    // A connection that failed to roll back (lost, or not answering) is not given back to the pool.
    let broken: Error | undefined
    try {
      await client.query('BEGIN')
      const result = await work(executorOf(client, transactionOptions?.isUnbounded === true))
      await client.query('COMMIT')
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError))
      })
      throw error
    } finally {
      client.off('error', ignoreLostConnection)
      client.release(broken)
    }
  }

  return {
    kind: 'postgres',
    ...executorOf(pool),
    async execute(script) {
      await pool.query(script).catch((error: unknown) => {
        throw markStoreFailure(error, 'PostgreSQL')
      })
    },
    transaction,
    async loadRows(load, first = []) {
      if (first.length <= 1) {
        // One statement, one round trip: the statement given first, if any, as a data-modifying
        // CTE (so it runs whatever the rest reads of it), its parameters first, then the rows.
        const [only] = first
        const parameters = only?.params ?? []
        const insert = bulkInsertOf(load, parameters.length + 1)
        const text = only === undefined ? insert.text : `WITH first AS (${only.sql}) ${insert.text}`
        await pool.query({ text, values: [...parameters, ...insert.values] }).catch((error: unknown) => {
          throw markStoreFailure(error, 'PostgreSQL')
        })
        return
      }
      await transaction(async (executor) => {
        for (const statement of first) await executor.query(statement.sql, statement.params)
        const insert = bulkInsertOf(load)
        await executor.query(insert.text, insert.values)
      })
    },
    async ping() {
      // Not SELECT 1: a standby, or a database set read-only, answers but fails every write.
      const result = await pool.query<{ readOnly: string }>(`SELECT current_setting('transaction_read_only') AS "readOnly"`).catch((error: unknown) => {
        throw postgresRefusalOf(error) ?? error
      })
      if (result.rows[0]?.readOnly === 'on') throw readOnlyDatabase()
    },
    close() {
      // pg's Pool.end() rejects a second call; here every call waits for the one closing. It also
      // waits for the connections a query holds, and one the database stopped answering on holds
      // it until the query's own timeout (35 s): a shutdown would outlast its grace period (and
      // `docker stop`'s 10 s). Past CLOSE_TIMEOUT_MS the close is done; the process exits next.
      closing ??= Promise.race([pool.end(), sleep(CLOSE_TIMEOUT_MS, undefined, { ref: false })])
      return closing
    },
  }
}

import { PGlite, types } from '@electric-sql/pglite'
import type { SqlDatabase, SqlExecutor } from '../ports.js'

/**
 * The embedded system of record: real PostgreSQL compiled to WebAssembly, in `dataDirectory`
 * (or memory when it is undefined). It serves one process; production runs PostgreSQL.
 */
export async function openPgliteDatabase(dataDirectory: string | undefined): Promise<SqlDatabase> {
  const database = await PGlite.create({
    ...(dataDirectory === undefined ? {} : { dataDir: dataDirectory }),
    parsers: {
      [types.INT8]: (value: string) => Number(value),
      [types.NUMERIC]: (value: string) => Number(value),
    },
  })

  const executorOf = (target: Pick<PGlite, 'query'>): SqlExecutor => ({
    async query<Row extends object>(sql: string, params: readonly unknown[] = []) {
      const result = await target.query<Row>(sql, params as unknown[])
      return result.rows
    },
  })

  return {
    kind: 'pglite',
    ...executorOf(database),
    async execute(script) {
      await database.exec(script)
    },
    async transaction(work) {
      return database.transaction((transaction) => work(executorOf(transaction)))
    },
    async ping() {
      await database.query('SELECT 1')
    },
    async close() {
      if (!database.closed) await database.close()
    },
  }
}

import pg from 'pg'
import { postgresUrl } from './services.js'
import { uniqueName } from './storage.js'

/** A PostgreSQL database of its own, for a process started with its DATABASE_URL. */
export interface ScratchDatabase {
  name: string
  url: string
  /** Runs one statement in it, on a connection of its own. */
  run(sql: string): Promise<void>
  drop(): Promise<void>
}

/** Runs one statement on a connection of its own. */
export async function runOn(connectionString: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

export async function createScratchDatabase(prefix: string): Promise<ScratchDatabase> {
  const name = uniqueName(prefix)
  await runOn(postgresUrl, `CREATE DATABASE ${name}`)
  const url = new URL(postgresUrl)
  url.pathname = `/${name}`
  return {
    name,
    url: url.href,
    run: (sql) => runOn(url.href, sql),
    drop: () => runOn(postgresUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  }
}

/**
 * What the operator's scripts (npm run account, npm run secret, npm run data) share: refusals that
 * end the script with one line, and a secret read from standard input without echo.
 */
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { Writable } from 'node:stream'
import { ConfigError, type Config } from '../src/config.js'
import { StartupError } from '../src/startup-error.js'
import { openDatabase } from '../src/storage/open-storage.js'
import type { SqlDatabase } from '../src/storage/ports.js'
import { urlWithoutPassword } from '../src/storage/url-without-password.js'

/** A refusal the script prints as one line, exiting 1. */
export class UsageError extends Error {}

/**
 * Runs the script `tollgate <name>`: what `run` answers goes to standard output; a refusal
 * (UsageError, StartupError, or ConfigError, which exits 78) to standard error as one line.
 */
export async function runOperatorScript(name: string, run: () => Promise<string>): Promise<void> {
  try {
    process.stdout.write(`${await run()}\n`)
  } catch (error) {
    if (error instanceof UsageError || error instanceof StartupError || error instanceof ConfigError) {
      process.stderr.write(`tollgate ${name}: ${error.message}\n`)
      process.exit(error instanceof ConfigError ? 78 : 1)
    }
    throw error
  }
}

/** Where a secret is read from: standard input, a terminal or not. */
export type SecretSource = NodeJS.ReadableStream & { isTTY?: boolean }

/** One line from a terminal, not echoed. */
function askQuietly(input: SecretSource, question: string): Promise<string> {
  process.stderr.write(question)
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() })
  const lines = createInterface({ input, output: silent, terminal: true })
  return new Promise((resolve) => {
    lines.once('line', (line) => {
      lines.close()
      process.stderr.write('\n')
      resolve(line)
    })
  })
}

/**
 * A secret (`what`: 'password', 'new secret') asked twice without echo on a terminal; otherwise
 * standard input's one line, its end not part of the secret (echo adds one), or the same line
 * twice, as the prompt asks for it. Anything else is refused rather than stored: a line break
 * inside a password is one no log-in form can type. `findProblem` judges the value (too short, say)
 * before a terminal asks for it again, so that nobody types a refused secret twice.
 */
export async function readSecretInput(what: string, findProblem: (value: string) => string | undefined, input: SecretSource = process.stdin): Promise<string> {
  const refuseIfProblem = (value: string): void => {
    const problem = findProblem(value)
    if (problem !== undefined) throw new UsageError(`the ${what} ${problem}`)
  }
  if (input.isTTY === true) {
    const label = what.charAt(0).toUpperCase() + what.slice(1)
    const value = await askQuietly(input, `${label}: `)
    refuseIfProblem(value)
    if ((await askQuietly(input, `${label} again: `)) !== value) throw new UsageError(`the two ${what}s differ`)
    return value
  }
  let text = ''
  for await (const chunk of input) text += String(chunk)
  const lines = text.split(/\r?\n/)
  if (lines.at(-1) === '') lines.pop()
  const [value, again, ...rest] = lines
  if (value === undefined || rest.length > 0 || (again !== undefined && again !== value)) {
    throw new UsageError(`standard input must hold the ${what} on one line (or twice, the same, as the prompt asks for it)`)
  }
  refuseIfProblem(value)
  return value
}

/** The database the service would use, in words an operator recognises (no password). */
export function describeDatabase(config: Pick<Config, 'databaseUrl' | 'dataDirectory'>): string {
  if (config.databaseUrl === undefined) return `the embedded database in ${resolve(config.dataDirectory, 'pglite')}`
  return `PostgreSQL at ${urlWithoutPassword(config.databaseUrl)}`
}

/**
 * Opens the service's database for a script. An embedded one that does not exist is refused
 * unless the script may make it (`create`): a DATA_DIR mistyped, or DATABASE_URL forgotten, would
 * otherwise get a new, empty database the server never reads.
 */
export async function openServiceDatabase(config: Pick<Config, 'databaseUrl' | 'dataDirectory'>, options: { create: boolean }): Promise<SqlDatabase> {
  if (config.databaseUrl === undefined && !options.create && !existsSync(join(config.dataDirectory, 'pglite'))) {
    throw new UsageError(`there is no database: ${describeDatabase(config)} does not exist (set DATA_DIR, or DATABASE_URL, as the server has them)`)
  }
  return openDatabase(config)
}

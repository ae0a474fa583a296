/**
 * What the operator's scripts (npm run account, npm run secret) share: refusals that end the
 * script with one line, and a secret read from standard input without echo.
 */
import { createInterface } from 'node:readline'
import { Writable } from 'node:stream'

/** A refusal the script prints as one line, exiting 1. */
export class UsageError extends Error {}

/** One line from a terminal, not echoed. */
function askQuietly(question: string): Promise<string> {
  process.stderr.write(question)
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() })
  const lines = createInterface({ input: process.stdin, output: silent, terminal: true })
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
 * inside a password is one no log-in form can type.
 */
export async function readSecretInput(what: string): Promise<string> {
  if (process.stdin.isTTY) {
    const label = what.charAt(0).toUpperCase() + what.slice(1)
    const value = await askQuietly(`${label}: `)
    if ((await askQuietly(`${label} again: `)) !== value) throw new UsageError(`the two ${what}s differ`)
    return value
  }
  let input = ''
  for await (const chunk of process.stdin) input += String(chunk)
  const lines = input.split(/\r?\n/)
  if (lines.at(-1) === '') lines.pop()
  const [value, again, ...rest] = lines
  if (value === undefined || rest.length > 0 || (again !== undefined && again !== value)) {
    throw new UsageError(`standard input must hold the ${what} on one line (or twice, the same, as the prompt asks for it)`)
  }
  return value
}

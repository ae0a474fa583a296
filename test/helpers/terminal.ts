import { spawn, spawnSync } from 'node:child_process'
import { isCi } from './services.js'

/**
 * Whether script(1) of util-linux (Debian's bsdutils, always installed there) can run a command
 * on a pseudo-terminal, as an operator's shell does. Elsewhere the terminal's tests are skipped,
 * saying so loudly; under CI its absence is an error.
 */
function findScriptCommand(): boolean {
  if (spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux') === true) return true
  const message = 'script(1) of util-linux is not installed'
  if (isCi) throw new Error(`${message}; CI must run the terminal's tests`)
  console.warn(`\n!!! SKIPPING TERMINAL TESTS: ${message} !!!\n`)
  return false
}

export const hasTerminal = findScriptCommand()

const quoted = (word: string) => `'${word.replaceAll("'", "'\\''")}'`

// script(1) runs the command with $SHELL -c (/bin/sh when unset, as under CI): exec makes Node the
// shell's process itself, so a Ctrl-C reaches Node alone. Without it, dash waits for Node and is
// killed by that SIGINT (script then returns 130), whatever Node's own exit.
const scriptArguments = (args: string[]) => [
  '--quiet',
  '--return',
  '--command',
  `exec ${[process.execPath, '--import', 'tsx', ...args].map(quoted).join(' ')}`,
  '/dev/null',
]

/**
 * Runs a Node script with `args` on a pseudo-terminal, `input` typed into it; its standard output
 * and error come back as one text (a terminal's), with the terminal's line ends made \n.
 */
export function runOnTerminal(args: string[], env: Record<string, string>, input: string): { status: number | null; output: string } {
  const result = spawnSync('script', scriptArguments(args), {
    env: { ...process.env, ...env },
    input,
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { status: result.status, output: result.stdout.replaceAll('\r\n', '\n') }
}

export interface TerminalProcess {
  /** What the terminal showed so far, its line ends made \n. */
  output(): string
  /** Types into the terminal: "\x03" is Ctrl-C, which sends the process SIGINT. */
  type(text: string): void
  exited: Promise<number | null>
}

/** Starts a Node script with `args` on a pseudo-terminal, as runOnTerminal, and leaves it running. */
export function startOnTerminal(args: string[], env: Record<string, string>): TerminalProcess {
  const child = spawn('script', scriptArguments(args), { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'ignore'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  return {
    output: () => output.replaceAll('\r\n', '\n'),
    type: (text) => child.stdin.write(text),
    exited: new Promise((resolve) => child.once('close', (code) => resolve(code))),
  }
}

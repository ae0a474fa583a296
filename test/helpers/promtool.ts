import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isCi } from './services.js'

/** Whether promtool runs here: on a laptop without it its tests are skipped, under CI it is an error. */
export const hasPromtool = spawnSync('promtool', ['--version']).status === 0
if (!hasPromtool && isCi) throw new Error('promtool (Debian package prometheus) is required under CI')

/**
 * promtool with `args`: its exit status and all it printed. It runs in `cwd`, or with `files`
 * in a directory of its own that holds them (name -> content); `input` is its standard input.
 */
export function runPromtool(args: string[], options: { cwd?: string; files?: Record<string, string>; input?: string } = {}): { status: number | null; output: string } {
  const { files, input } = options
  const directory = files === undefined ? undefined : mkdtempSync(join(tmpdir(), 'tollgate-promtool-'))
  try {
    for (const [name, content] of Object.entries(files ?? {})) writeFileSync(join(directory ?? '', name), content)
    const result = spawnSync('promtool', args, { cwd: directory ?? options.cwd, input, encoding: 'utf8' })
    return { status: result.status, output: result.stdout + result.stderr }
  } finally {
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true })
  }
}

import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { freePort } from './helpers/free-port.js'

const root = new URL('../', import.meta.url).pathname
const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>
  dependencies: Record<string, string>
}

async function sourceFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true })
  return entries.filter((entry) => entry.isFile() && /\.[cm]?[jt]s$/.test(entry.name)).map((entry) => join(entry.parentPath, entry.name))
}

/** Every module a file names: static and dynamic imports, re-exports, require.resolve. */
function specifiersOf(text: string): string[] {
  const patterns = [/\bfrom\s+'([^']+)'/g, /\bimport\s+'([^']+)'/g, /\bimport\(\s*'([^']+)'\s*\)/g, /\brequire(?:\.resolve)?\(\s*'([^']+)'\s*\)/g]
  return patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1] ?? ''))
}

function packageOf(specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier)
}

describe('a production install (npm ci --omit=dev)', () => {
  it('has every package the server loads: src/ names only production dependencies and Node built-ins', async () => {
    const missing: string[] = []
    for (const file of await sourceFiles(join(root, 'src'))) {
      for (const specifier of specifiersOf(await readFile(file, 'utf8'))) {
        if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier)) continue
        const name = packageOf(specifier)
        if (!(name in manifest.dependencies)) missing.push(`${file.slice(root.length)}: ${specifier}`)
      }
    }
    expect(missing).toEqual([])
  })

  it.each([
    ['npm run serve', ['run', 'serve', '--silent']],
    // --ignore-scripts skips prestart's build; the signal still has to cross both npm processes.
    ['npm start', ['start', '--ignore-scripts', '--silent']],
  ])('`%s` serves (TypeScript through tsx, a production dependency) and shuts down gracefully on a SIGTERM sent to npm alone', async (_name, args) => {
    expect(manifest.dependencies).toHaveProperty('tsx')
    const port = await freePort()
    const child = spawn('npm', args, {
      cwd: root,
      env: { ...process.env, NODE_ENV: 'development', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: mkdtempSync(join(tmpdir(), 'tollgate-serve-')), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let output = ''
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${output}`)), 60_000)
        const read = (chunk: Buffer) => {
          output += chunk.toString()
          if (output.includes('Tollgate is serving')) {
            clearTimeout(timer)
            resolve()
          }
        }
        child.stdout.on('data', read)
        child.stderr.on('data', read)
        void exited.then((code) => reject(new Error(`exited with ${code}:\n${output}`)))
      })
      const health = await fetch(`http://127.0.0.1:${port}/health`)
      expect(await health.json()).toEqual({ status: 'ok' })

      // What a process manager or `docker stop` does: signal npm, the process it started. The
      // scripts exec their commands down to node itself, so the signal reaches the server
      // instead of orphaning it, and nothing in between gives up on a shutdown that takes time.
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
      expect(output).toContain('"msg":"shutting down"')
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow()
    } finally {
      // Whatever is left of npm, its shells and the server: one process group.
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
      } catch {
        // Already gone.
      }
    }
  }, 90_000)
})

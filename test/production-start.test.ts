import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { freePort } from './helpers/free-port.js'
import { TEST_SECRET } from './helpers/test-app.js'

const running = new Set<ChildProcess>()
afterEach(async () => {
  for (const child of running) {
    const closed = new Promise((resolve) => child.once('close', resolve))
    child.kill('SIGTERM')
    await closed
  }
  running.clear()
})

/** The warnings (pino level 40) a production start logs until it serves. */
async function warningsOfProductionStart(env: Record<string, string>): Promise<string[]> {
  const port = await freePort()
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      TOLLGATE_SECRET: TEST_SECRET,
      PUBLIC_URL: 'https://tollgate.example.com',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'tollgate-production-')),
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 120 s:\n${output}`)), 120_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('Tollgate is serving')) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.once('close', (code) => reject(new Error(`exited with ${code}:\n${output}`)))
  })
  return output.split('\n').flatMap((line) => {
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string }
      return entry.level === 40 && entry.msg !== undefined ? [entry.msg] : []
    } catch {
      return []
    }
  })
}

describe('a production start', () => {
  it('warns that /metrics is public when METRICS_TOKEN is not set, and not when it is', async () => {
    expect(await warningsOfProductionStart({})).toContainEqual(expect.stringMatching(/^METRICS_TOKEN is not set: \/metrics answers anyone who can reach it/))
    expect(await warningsOfProductionStart({ METRICS_TOKEN: 'a-random-scrape-token-for-prometheus' })).not.toContainEqual(expect.stringContaining('METRICS_TOKEN'))
  }, 300_000)

  it('warns that passkeys and invitation links follow the Host header when PUBLIC_URL is not set, and not when it is', async () => {
    expect(await warningsOfProductionStart({ PUBLIC_URL: '' })).toContainEqual(expect.stringMatching(/^PUBLIC_URL is not set: passkeys, invitation links .* take the origin from each request/))
    expect(await warningsOfProductionStart({})).not.toContainEqual(expect.stringContaining('PUBLIC_URL'))
  }, 300_000)
})

import { spawn, type ChildProcess } from 'node:child_process'
import { freePort } from './free-port.js'

/** A Tollgate process started as an operator starts it (`src/server.ts`), in development mode. */
export interface StartedServer {
  process: ChildProcess
  baseUrl: string
  /** The demo site's keys, as the start printed them. */
  siteKey: string
  secretKey: string
  exited: Promise<number | null>
  /** Everything the process wrote so far, stdout and stderr. */
  output: () => string
}

const running = new Set<ChildProcess>()

/** Kills (SIGKILL) every process started here that may still run: for a suite's afterAll. */
export function killStartedServers(): void {
  for (const child of running) child.kill('SIGKILL')
}

/**
 * Starts the server with the environment given over the test's own (DATA_DIR at least), on a
 * free port, and waits for the line that says it serves and the demo site's keys.
 */
export async function startServerProcess(env: Record<string, string>): Promise<StartedServer> {
  const port = await freePort()
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { ...process.env, NODE_ENV: 'development', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  // 'close', not 'exit': at 'exit' the last lines written to stdout may not have been read yet (a loaded host).
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  void exited.then(() => running.delete(child))
  let output = ''
  const [siteKey, secretKey] = await new Promise<[string, string]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${output}`)), 60_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const demo = /site key (tgk_[\w-]+), secret key (tgs_[\w-]+)/.exec(output)
      if (demo?.[1] !== undefined && demo[2] !== undefined && output.includes('Tollgate is serving')) {
        clearTimeout(timer)
        resolve([demo[1], demo[2]])
      }
    })
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    void exited.then((code) => reject(new Error(`exited with ${code}:\n${output}`)))
  })
  return { process: child, baseUrl: `http://127.0.0.1:${port}`, siteKey, secretKey, exited, output: () => output }
}

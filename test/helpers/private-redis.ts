import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import net from 'node:net'
import { freePort } from './free-port.js'

/** Whether a redis-server binary is here to start private servers with. */
export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0

/**
 * A redis-server of the test's own on a free port, without persistence (as CI's): the test may
 * kill it and start it again, empty, on the same port.
 */
export interface PrivateRedis {
  url: string
  /** Kills the server (SIGKILL) and starts a new one, empty, on the same port. */
  restart(): Promise<void>
  stop(): Promise<void>
}

function waitForPort(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 10_000
    const attempt = () => {
      const socket = net.connect({ host: '127.0.0.1', port })
      socket.once('connect', () => {
        socket.destroy()
        resolve()
      })
      socket.once('error', () => {
        socket.destroy()
        if (Date.now() > deadline) reject(new Error(`redis-server did not listen on ${port}`))
        else setTimeout(attempt, 50)
      })
    }
    attempt()
  })
}

export async function startPrivateRedis(extraArguments: string[] = []): Promise<PrivateRedis> {
  const port = await freePort()
  let child: ChildProcess
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArguments], { stdio: 'ignore' })
    await waitForPort(port)
  }
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGKILL')
    await once(child, 'exit')
  }
  await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    async restart() {
      await stop()
      await start()
    },
    stop,
  }
}

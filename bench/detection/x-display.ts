import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'

export interface XDisplay {
  /** The DISPLAY value, e.g. ":93". */
  name: string
  close(): Promise<void>
}

/** Starts a virtual X server (Xvfb) on a free display number; windows on it are real, just not on a monitor. */
export async function startXvfb(width = 1280, height = 1024): Promise<XDisplay> {
  let number = 90
  while (existsSync(`/tmp/.X11-unix/X${number}`) || existsSync(`/tmp/.X${number}-lock`)) number++
  const name = `:${number}`
  const server: ChildProcess = spawn('Xvfb', [name, '-screen', '0', `${width}x${height}x24`, '-nolisten', 'tcp'], { stdio: 'ignore' })
  const deadline = Date.now() + 10_000
  while (!existsSync(`/tmp/.X11-unix/X${number}`)) {
    if (Date.now() > deadline || server.exitCode !== null) throw new Error(`Xvfb did not start on ${name}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    name,
    close: () => new Promise((resolve) => {
      if (server.exitCode !== null) {
        resolve()
        return
      }
      server.once('exit', () => resolve())
      server.kill('SIGTERM')
    }),
  }
}

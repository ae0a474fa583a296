import { execFile, spawn } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The people class: Chromium as a person starts it (a plain process with a window on the X
 * display: no --headless, no --enable-automation, no remote debugging, nothing injected into the
 * page), operated only through the X server by xdotool, which moves the pointer and presses keys
 * as a mouse and keyboard would, at a human pace. The page cannot tell these events from a
 * person's: they arrive through the same input path. Flags beyond the URL: a fresh profile,
 * --no-sandbox (Chromium refuses to run as root otherwise) and the switches that keep Chromium
 * from contacting the internet, which this machine does not reach.
 */
const CHROMIUM_ARGS = ['--no-sandbox', '--no-first-run', '--no-default-browser-check', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-quic', '--window-position=0,0', '--window-size=1280,1000']

async function xdotool(display: string, args: string[]): Promise<string> {
  const { stdout } = await run('xdotool', args, { env: { ...process.env, DISPLAY: display }, timeout: 30_000 })
  return stdout.trim()
}

async function findWindow(display: string, title: string, timeoutMs: number): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const found = await xdotool(display, ['search', '--onlyvisible', '--name', title]).catch(() => '')
    if (found !== '') return found.split('\n')[0]
    await sleep(250)
  }
  return undefined
}

interface Point {
  x: number
  y: number
}

/**
 * Moves the pointer along a curved path (a quadratic Bezier through a random control point)
 * with easing and irregular pauses, like a hand on a mouse: fast in the middle, slow at the ends.
 */
async function movePointer(display: string, from: Point, to: Point): Promise<void> {
  const control = { x: (from.x + to.x) / 2 + randomInt(-120, 121), y: (from.y + to.y) / 2 + randomInt(-90, 91) }
  const steps = randomInt(18, 40)
  const chain: string[] = []
  for (let step = 1; step <= steps; step++) {
    const linear = step / steps
    const t = linear < 0.5 ? 2 * linear * linear : 1 - (-2 * linear + 2) ** 2 / 2
    const x = Math.round((1 - t) ** 2 * from.x + 2 * (1 - t) * t * control.x + t ** 2 * to.x)
    const y = Math.round((1 - t) ** 2 * from.y + 2 * (1 - t) * t * control.y + t ** 2 * to.y)
    chain.push('mousemove', String(Math.max(1, x)), String(Math.max(1, y)), 'sleep', (randomInt(8, 35) / 1000).toFixed(3))
  }
  await xdotool(display, chain)
}

async function typeLikeAPerson(display: string, text: string): Promise<void> {
  for (const character of text) {
    await xdotool(display, ['type', '--delay', '0', character])
    await sleep(randomInt(70, 260))
  }
}

/**
 * One visit: open the demo page, look around with the pointer, scroll a little, move to the
 * sign-up form, type an address, press Enter, and wait for the result page (or give up after a
 * minute: a blocked visitor never gets there).
 */
export async function runPersonSession(display: string, pageUrl: string): Promise<void> {
  const profile = await mkdtemp(join(tmpdir(), 'tollgate-eval-person-'))
  const browser = spawn('chromium', [...CHROMIUM_ARGS, `--user-data-dir=${profile}`, pageUrl], {
    env: { ...process.env, DISPLAY: display },
    stdio: 'ignore',
    detached: true,
  })
  try {
    const window = await findWindow(display, 'Tollgate demo', 30_000)
    if (window === undefined) throw new Error('the demo page did not open')
    await sleep(randomInt(800, 1_600))
    let pointer: Point = { x: randomInt(300, 900), y: randomInt(300, 700) }
    await xdotool(display, ['mousemove', String(pointer.x), String(pointer.y)])
    for (let look = randomInt(2, 5); look > 0; look--) {
      const next = { x: randomInt(80, 1_200), y: randomInt(200, 900) }
      await movePointer(display, pointer, next)
      pointer = next
      await sleep(randomInt(150, 700))
    }
    await xdotool(display, ['click', '5'])
    await sleep(randomInt(300, 800))
    await xdotool(display, ['click', '4'])
    await sleep(randomInt(300, 800))
    // Into the page's left margin near the top, then Tab: the first field is the e-mail address.
    const margin = { x: randomInt(20, 120), y: randomInt(170, 230) }
    await movePointer(display, pointer, margin)
    await xdotool(display, ['click', '1'])
    await sleep(randomInt(200, 500))
    await xdotool(display, ['key', 'Tab'])
    await sleep(randomInt(300, 700))
    await typeLikeAPerson(display, `person${randomInt(100, 99_999)}@example.org`)
    await sleep(randomInt(400, 1_000))
    await movePointer(display, margin, { x: randomInt(200, 600), y: randomInt(250, 450) })
    await xdotool(display, ['key', 'Return'])
    await findWindow(display, 'Tollgate demo: result', 60_000)
  } finally {
    if (browser.pid !== undefined) {
      try {
        process.kill(-browser.pid, 'SIGTERM')
      } catch {
        // Already gone.
      }
    }
    await sleep(500)
    await rm(profile, { recursive: true, force: true })
  }
}

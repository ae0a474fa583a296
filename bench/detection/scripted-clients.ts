import { execFile } from 'node:child_process'
import { createHash, randomBytes, randomInt } from 'node:crypto'
import { promisify } from 'node:util'
import { hasLeadingZeroBits, LANES, nonceOf, prefixOf, SUFFIX_COUNT } from '../../sdk/src/solver/nonce-layout.js'
import { solveNatively } from './native-solver.js'

const run = promisify(execFile)

export const CHROME_USER_AGENT = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36'

export type ScriptedVariant = 'fetch' | 'fetch-browser-headers' | 'curl' | 'curl-browser-headers'
export const scriptedVariants: ScriptedVariant[] = ['fetch', 'fetch-browser-headers', 'curl', 'curl-browser-headers']

interface HttpAnswer {
  status: number
  body: string
}

/** One HTTP exchange, by Node's fetch or by the curl binary, with the variant's headers. */
async function send(variant: ScriptedVariant, url: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string): Promise<HttpAnswer> {
  if (variant.startsWith('fetch')) {
    const response = await fetch(url, { method, headers, body })
    return { status: response.status, body: await response.text() }
  }
  const args = ['-s', '-X', method, '-w', '\n%{http_code}']
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'user-agent') args.push('-A', value)
    else args.push('-H', `${name}: ${value}`)
  }
  if (body !== undefined) args.push('--data-binary', body)
  args.push(url)
  const { stdout } = await run('curl', args, { maxBuffer: 1 << 20 })
  const split = stdout.lastIndexOf('\n')
  return { status: Number(stdout.slice(split + 1)), body: stdout.slice(0, split) }
}

/**
 * A scripted client of the kind the issue names: it scrapes the site key from the page, asks for
 * a challenge, solves it natively, and submits made-up signals, following step-ups as the SDK
 * does. The "browser headers" variants dress up as Chrome (User-Agent, Accept-Language, Origin,
 * Referer); none of them runs a browser.
 */
export async function runScriptedSession(variant: ScriptedVariant, baseUrl: string, maxStepUps = 3): Promise<string[]> {
  const browserHeaders: Record<string, string> = variant.endsWith('browser-headers')
    ? { 'user-agent': CHROME_USER_AGENT, 'accept-language': 'en-US,en;q=0.9', origin: baseUrl, referer: `${baseUrl}/demo` }
    : {}
  const page = await send(variant, `${baseUrl}/demo`, 'GET', browserHeaders)
  const siteKey = /data-site-key="([^"]+)"/.exec(page.body)?.[1]
  if (siteKey === undefined) throw new Error('no site key on the demo page')
  const actions: string[] = []
  for (let round = 0; round <= maxStepUps; round++) {
    const challengeAnswer = await send(variant, `${baseUrl}/api/v1/challenge`, 'POST', { ...browserHeaders, 'x-site-key': siteKey })
    if (challengeAnswer.status !== 200) return [...actions, `http_${challengeAnswer.status}`]
    const challenge = JSON.parse(challengeAnswer.body) as { challengeId: string; challenge: string; difficulty: number }
    const solution = solveNatively(challenge.challenge, challenge.difficulty)
    const submission = {
      challengeId: challenge.challengeId,
      nonce: solution.nonce,
      // The true time: a claim longer than the server observed is caught at once.
      solveTimeMs: solution.elapsedMs,
      fingerprint: { canvas: randomBytes(16).toString('hex'), webgl: randomBytes(16).toString('hex') },
      behaviorData: { mouseMovements: randomInt(20, 200), keystrokes: randomInt(5, 40) },
    }
    const verdict = await send(variant, `${baseUrl}/api/v1/verify`, 'POST', { ...browserHeaders, 'x-site-key': siteKey, 'content-type': 'application/json' }, JSON.stringify(submission))
    if (verdict.status !== 200) return [...actions, `http_${verdict.status}`]
    const action = (JSON.parse(verdict.body) as { action: string }).action
    actions.push(action)
    if (action !== 'challenge') break
  }
  return actions
}

const LINUX_CHROME_140 = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36'

/**
 * What Chrome 140 on Linux reported through the SDK (copied from a real browser's submission):
 * the careful forger replays a real device rather than making values up.
 */
const copiedFingerprint = {
  canvas: 'a3f1c09b7e5d42a8b6c0d1e2f3a4b5c6',
  webgl: '5e8d2f1a0b9c4d7e6f3a2b1c0d9e8f7a',
  webglSoftware: false,
  webdriver: false,
  headlessUserAgent: false,
  automationMarkers: 0,
  patchedNatives: 0,
  pluginsLength: 5,
  languagesLength: 2,
  language: 'en-US',
  hardwareConcurrency: 8,
  deviceMemory: 8,
  maxTouchPoints: 0,
  screenWidth: 1920,
  screenHeight: 1080,
  colorDepth: 24,
  outerWidth: 1920,
  outerHeight: 1048,
  timezone: 'Europe/Berlin',
  timezoneOffset: -60,
  platform: 'Linux x86_64',
  userAgentBrands: 'Chromium;Google Chrome;Not?A_Brand',
}

/** The SDK's search (sdk/src/solver/nonce-layout.ts: lanes of a 12-digit prefix, 4-digit suffixes), natively: a nonce in the SDK's layout. */
function solveInSdkLayout(challenge: string, difficulty: number): { nonce: string; elapsedMs: number } {
  const started = performance.now()
  for (let group = 0; ; group++) {
    for (let lane = 0; lane < LANES; lane++) {
      for (let suffix = 0; suffix < SUFFIX_COUNT; suffix++) {
        const nonce = nonceOf(prefixOf(group, lane), suffix)
        const digest = createHash('sha256').update(challenge + nonce).digest()
        if (hasLeadingZeroBits(Array.from({ length: 8 }, (_, word) => digest.readUInt32BE(word * 4)), difficulty)) {
          return { nonce, elapsedMs: Math.round(performance.now() - started) }
        }
      }
    }
  }
}

/**
 * A careful forgery (bench/README.md, "Detection"): no browser, but everything a browser would
 * send, consistent with itself: Chrome's headers with matching client hints and fetch metadata,
 * a real device's fingerprint, person-like interaction counts and rhythm, a nonce in the SDK's
 * layout, and its true solve time after a person's few seconds on the page. docs/risk.md ("Limits")
 * says such a client is allowed: this class measures that, so that the targets are not read as
 * covering it.
 */
export async function runCarefulForgerySession(baseUrl: string, maxStepUps = 3): Promise<string[]> {
  const headers: Record<string, string> = {
    'user-agent': LINUX_CHROME_140,
    'accept-language': 'en-US,en;q=0.9',
    'sec-ch-ua': '"Chromium";v="140", "Google Chrome";v="140", "Not?A_Brand";v="24"',
    'sec-ch-ua-mobile': '?0',
    'sec-ch-ua-platform': '"Linux"',
    'sec-fetch-site': 'same-origin',
    'sec-fetch-mode': 'cors',
    'sec-fetch-dest': 'empty',
    origin: baseUrl,
    referer: `${baseUrl}/demo`,
  }
  const page = await fetch(`${baseUrl}/demo`, { headers: { ...headers, 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': 'none' } })
  const siteKey = /data-site-key="([^"]+)"/.exec(await page.text())?.[1]
  if (siteKey === undefined) throw new Error('no site key on the demo page')
  const pageOpenedAt = performance.now()
  // A person reads the form and types an address before submitting.
  await new Promise((resolve) => setTimeout(resolve, randomInt(3_000, 6_000)))
  const actions: string[] = []
  for (let round = 0; round <= maxStepUps; round++) {
    const challengeAnswer = await fetch(`${baseUrl}/api/v1/challenge`, { method: 'POST', headers: { ...headers, 'x-site-key': siteKey } })
    if (challengeAnswer.status !== 200) return [...actions, `http_${challengeAnswer.status}`]
    const challenge = await challengeAnswer.json() as { challengeId: string; challenge: string; difficulty: number }
    const solution = solveInSdkLayout(challenge.challenge, challenge.difficulty)
    const submission = {
      challengeId: challenge.challengeId,
      nonce: solution.nonce,
      solveTimeMs: solution.elapsedMs,
      fingerprint: copiedFingerprint,
      behaviorData: {
        mouseMovements: randomInt(40, 160), keystrokes: randomInt(12, 30), clicks: randomInt(1, 4), scrolls: randomInt(0, 3),
        touches: 0, focusChanges: randomInt(1, 3), untrustedEvents: 0,
        timeOnPageMs: Math.round(performance.now() - pageOpenedAt), firstInteractionMs: randomInt(300, 1_500),
        mouseIntervalMeanMs: randomInt(14, 30), mouseIntervalStdMs: randomInt(8, 40), keyIntervalMeanMs: randomInt(110, 220), keyIntervalStdMs: randomInt(30, 90),
      },
    }
    const verdict = await fetch(`${baseUrl}/api/v1/verify`, { method: 'POST', headers: { ...headers, 'x-site-key': siteKey, 'content-type': 'application/json' }, body: JSON.stringify(submission) })
    if (verdict.status !== 200) return [...actions, `http_${verdict.status}`]
    const action = (await verdict.json() as { action: string }).action
    actions.push(action)
    if (action !== 'challenge') break
  }
  return actions
}

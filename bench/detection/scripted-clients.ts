import { execFile } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import { promisify } from 'node:util'
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

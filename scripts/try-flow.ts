/**
 * npm run try-flow [-- --site-key tgk_... --secret tgs_... --url http://localhost:3000 --origin https://shop.example]
 *
 * The public flow from a shell, as a site's page and backend run it: asks for a challenge, solves
 * its proof of work with the reference solver, submits the solution, and redeems the token at
 * Siteverify, printing each step's answer. Without keys it uses the test site key and secret,
 * whose every submission passes. A script is scored as the bot it is, so a site of your own
 * gives it a token only when its allowed addresses hold the script's (README, "Trying the flow
 * from a script"). Exit code 0 when Siteverify accepted the token (or, without a secret, when
 * verify gave one), 1 when a step was refused or the service could not be reached, 2 on a usage error.
 */
import { parseArgs } from 'node:util'
import type { Challenge } from '../src/domain/challenge/issue-challenge.js'
import { solveChallenge } from '../src/domain/proof-of-work/solve-challenge.js'
import { testSiteKeys } from '../src/domain/sites/test-site-keys.js'
import { testSecrets } from '../src/domain/siteverify/test-secrets.js'

const USAGE = [
  'usage: npm run try-flow [-- --site-key tgk_... [--secret tgs_...] [--url URL] [--origin ORIGIN]]',
  '  --site-key  the site key to ask challenges for (default: the test site key whose submissions all pass)',
  '  --secret    the secret key to redeem the token with at Siteverify (default: the test secret that passes,',
  '              with the default site key only; without it, a site of your own stops after verify)',
  '  --url       where Tollgate answers (default: TOLLGATE_URL, else http://localhost:PORT, PORT defaulting to 3000)',
  '  --origin    the Origin header to send, for a site that lists its domains (default: none)',
].join('\n')

class UsageError extends Error {}
class Refused extends Error {}

interface Options {
  siteKey: string
  secret: string | undefined
  url: string
  origin: string | undefined
}

/** The test site key whose every submission passes (docs/core-flow.md, section 6). */
const TEST_SITE_KEY = testSiteKeys.alwaysPasses

/** The options given, or 'help' for --help. */
function readOptions(args: string[]): Options | 'help' {
  let parsed
  try {
    parsed = parseArgs({
      args,
      options: { 'site-key': { type: 'string' }, secret: { type: 'string' }, url: { type: 'string' }, origin: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }).values
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  if (parsed.help === true) return 'help'
  const siteKey = parsed['site-key'] ?? TEST_SITE_KEY
  const secret = parsed.secret ?? (siteKey === TEST_SITE_KEY ? testSecrets.alwaysPasses : undefined)
  const url = (parsed.url ?? process.env.TOLLGATE_URL ?? `http://localhost:${process.env.PORT ?? '3000'}`).replace(/\/+$/, '')
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new UsageError(`--url must be an http or https address, not ${url}`)
  if (parsed.origin !== undefined && !URL.canParse(parsed.origin)) throw new UsageError(`--origin must be an origin such as https://shop.example, not ${parsed.origin}`)
  return { siteKey, secret, url, origin: parsed.origin }
}

/** POSTs to the service and reads its JSON answer; a refusal (any status but 200) names its code. */
async function post(options: Options, path: string, init: { headers?: Record<string, string>; body?: string | URLSearchParams }): Promise<Record<string, unknown>> {
  let response: Response
  try {
    response = await fetch(`${options.url}${path}`, { method: 'POST', headers: init.headers, body: init.body })
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    throw new Refused(`cannot reach Tollgate at ${options.url} (${cause?.code ?? cause?.message ?? (error as Error).message}): is it running (npm start)? Pass --url otherwise.`)
  }
  const text = await response.text()
  let answer: Record<string, unknown>
  try {
    answer = JSON.parse(text) as Record<string, unknown>
  } catch {
    throw new Refused(`${path} answered ${response.status} with something other than JSON: ${text.slice(0, 200)}`)
  }
  if (response.status !== 200) {
    // The service's error shape (docs/core-flow.md, "Errors of the public routes").
    const { code, message } = (answer.error ?? {}) as { code?: string; message?: string }
    throw new Refused(`${path} answered ${response.status} ${code ?? ''}: ${message ?? text}`)
  }
  return answer
}

async function tryFlow(options: Options, print: (line: string) => void): Promise<void> {
  const headers: Record<string, string> = { 'x-site-key': options.siteKey, ...(options.origin === undefined ? {} : { origin: options.origin }) }
  print(`Tollgate at ${options.url}, site key ${options.siteKey}${options.siteKey === TEST_SITE_KEY ? ' (the test site key: every submission passes)' : ''}`)

  const challenge = (await post(options, '/api/v1/challenge', { headers })) as unknown as Challenge
  print(`1. challenge   ${challenge.challengeId}, difficulty ${challenge.difficulty} bits, expires ${challenge.expiresAt}`)

  const started = performance.now()
  const nonce = solveChallenge({ challenge: challenge.challenge, difficulty: challenge.difficulty })
  const solveTimeMs = Math.round(performance.now() - started)
  print(`2. solved      nonce ${nonce} in ${solveTimeMs} ms`)

  const submission = { challengeId: challenge.challengeId, nonce, solveTimeMs, fingerprint: {}, behaviorData: {} }
  const verdict = await post(options, '/api/v1/verify', { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(submission) })
  print(`3. verify      action ${String(verdict.action)}, risk score ${String(verdict.riskScore)}${typeof verdict.token === 'string' ? `, token ${verdict.token}` : ', no token'}`)
  if (typeof verdict.token !== 'string') {
    throw new Refused(
      'a script is scored as the bot it is, so it gets no token: use the test keys (no options), or a site whose ' +
        "settings.allowedAddresses hold this machine's address (README, \"Trying the flow from a script\")",
    )
  }
  if (options.secret === undefined) {
    print('4. siteverify  skipped: pass --secret with the site\'s secret key to redeem the token')
    return
  }

  const redeemed = await post(options, '/api/v1/siteverify', { body: new URLSearchParams({ secret: options.secret, response: verdict.token }) })
  const errors = Array.isArray(redeemed['error-codes']) ? redeemed['error-codes'].join(', ') : ''
  if (redeemed.success !== true) {
    print(`4. siteverify  success false, error-codes ${errors}`)
    throw new Refused(`Siteverify refused the token (${errors}): is --secret the site's secret key?`)
  }
  print(`4. siteverify  success true, hostname ${String(redeemed.hostname)}, action ${String(redeemed.action)}`)
}

async function main(): Promise<number> {
  let options: Options | 'help'
  try {
    options = readOptions(process.argv.slice(2))
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    console.error(`tollgate try-flow: ${error.message}`)
    console.error(USAGE)
    return 2
  }
  if (options === 'help') {
    console.log(USAGE)
    return 0
  }
  try {
    await tryFlow(options, (line) => console.log(line))
    return 0
  } catch (error) {
    if (!(error instanceof Refused)) throw error
    console.error(`tollgate try-flow: ${error.message}`)
    return 1
  }
}

process.exitCode = await main()

import type { LightMyRequestResponse } from 'fastify'
import type { App } from '../../src/app.js'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { countLeadingZeroBits } from '../../src/domain/proof-of-work/count-leading-zero-bits.js'
import { hashSolution, verifySolution } from '../../src/domain/proof-of-work/verify-solution.js'
import type { Site, SiteSettings } from '../../src/domain/sites/site.js'

export interface TestSite {
  site: Site
  siteKey: string
  secretKey: string
}

/**
 * A site written straight through the repository. Difficulty 4 by default so that solving takes
 * microseconds; the flow is the same at any difficulty.
 */
export async function createTestSite(
  app: App,
  options: { domains?: string[]; settings?: Partial<SiteSettings>; name?: string } = {},
): Promise<TestSite> {
  const { site, secretKey } = await app.sites.create({
    accountId: null,
    name: options.name ?? 'Core flow test site',
    domains: options.domains ?? [],
    settings: { difficulty: 4, ...options.settings },
  })
  return { site, siteKey: site.siteKey, secretKey }
}

/** The headers a current desktop Chrome sends when a page on `origin` calls the API. */
export function browserHeaders(siteKey: string, origin = 'https://shop.example.com'): Record<string, string> {
  return {
    'x-site-key': siteKey,
    origin,
    'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    'accept-language': 'en-GB,en;q=0.9',
    'sec-fetch-mode': 'cors',
    'sec-fetch-site': 'cross-site',
    'sec-fetch-dest': 'empty',
    'sec-ch-ua': '"Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"',
    'sec-ch-ua-mobile': '?0',
    'sec-ch-ua-platform': '"Linux"',
  }
}

export async function requestChallenge(app: App, headers: Record<string, string>): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url: '/api/v1/challenge', headers })
}

export async function fetchChallenge(app: App, headers: Record<string, string>): Promise<Challenge> {
  const response = await requestChallenge(app, headers)
  if (response.statusCode !== 200) throw new Error(`challenge answered ${response.statusCode}: ${response.body}`)
  return response.json<Challenge>()
}

/**
 * Solves as the SDK's workers do (sdk/src/solver/nonce-layout.ts): 16-digit nonces, a 12-digit
 * lane prefix from 100000000000 and a 4-digit suffix, so the risk model sees the SDK's solver.
 */
export function solve(challenge: Pick<Challenge, 'challenge' | 'difficulty'>): string {
  for (let prefix = 100_000_000_000; ; prefix++) {
    for (let suffix = 0; suffix < 10_000; suffix++) {
      const nonce = `${prefix}${String(suffix).padStart(4, '0')}`
      if (countLeadingZeroBits(hashSolution(challenge.challenge, nonce)) >= challenge.difficulty) return nonce
    }
  }
}

/**
 * A nonce that does not solve the challenge: the first from 0 that fails (at a low difficulty a
 * fixed nonce solves it by luck: one in 16 at 4 bits).
 */
export function wrongNonce(challenge: Pick<Challenge, 'challenge' | 'difficulty'>): string {
  let nonce = 0
  while (verifySolution(challenge, String(nonce))) nonce += 1
  return String(nonce)
}

/** What the SDK collects in that browser (sdk/src/signals/fingerprint.ts). */
export const browserFingerprint = {
  canvas: 'c3a1f09be2d44e57a0b1',
  webgl: 'ANGLE (Intel, Mesa Intel(R) UHD Graphics 620, OpenGL 4.6)',
  webglSoftware: false,
  webdriver: false,
  headlessUserAgent: false,
  automationMarkers: 0,
  patchedNatives: 0,
  pluginsLength: 5,
  languagesLength: 2,
  language: 'en-GB',
  hardwareConcurrency: 8,
  screenWidth: 1920,
  screenHeight: 1080,
  outerWidth: 1280,
  outerHeight: 900,
  timezone: 'Europe/London',
  platform: 'Linux x86_64',
  userAgentBrands: 'Google Chrome;Chromium;Not_A Brand',
}

/**
 * A submission with the signals of a person in a real browser. Like the SDK it claims the time
 * the solving took: a fixed short claim would be too fast for a nonce found late at a high
 * difficulty (solve_too_fast), by the luck of the challenge.
 */
export function humanSubmission(challenge: Challenge, nonce?: string) {
  const started = performance.now()
  const solved = nonce ?? solve(challenge)
  return {
    challengeId: challenge.challengeId,
    nonce: solved,
    solveTimeMs: Math.max(1, Math.round(performance.now() - started)),
    fingerprint: browserFingerprint,
    behaviorData: { mouseMovements: 23, keystrokes: 7 },
  }
}

export async function submitSolution(app: App, headers: Record<string, string>, body: unknown): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url: '/api/v1/verify', headers, payload: body as object })
}

/** Challenge, solve and submit as a person would; returns the verify answer. */
export async function passVerification(app: App, headers: Record<string, string>): Promise<LightMyRequestResponse> {
  const challenge = await fetchChallenge(app, headers)
  return submitSolution(app, headers, humanSubmission(challenge))
}

/** A token for the site, from the real flow. */
export async function obtainToken(app: App, headers: Record<string, string>): Promise<string> {
  const response = await passVerification(app, headers)
  const body = response.json<{ token?: string }>()
  if (body.token === undefined) throw new Error(`no token: ${response.body}`)
  return body.token
}

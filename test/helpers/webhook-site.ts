import { randomUUID } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import type { App } from '../../src/app.js'
import { encryptSecret } from '../../src/domain/secret-box.js'
import type { Site, SiteSettings } from '../../src/domain/sites/site.js'
import { solveChallenge } from '../../src/domain/proof-of-work/solve-challenge.js'

export interface WebhookSiteOptions {
  webhookUrl: string | null
  /** The plain webhookSecret; stored encrypted, as the site update stores it. Omit for none. */
  secret?: string
  accountId?: string | null
  settings?: Partial<SiteSettings>
}

/** A site with a webhook, written straight through the repository. */
export async function createWebhookSite(app: App, options: WebhookSiteOptions): Promise<Site> {
  const id = randomUUID()
  const { site } = await app.sites.create({
    id,
    accountId: options.accountId ?? null,
    name: 'Webhook test site',
    settings: { ...options.settings, webhookUrl: options.webhookUrl },
    webhookSecretCiphertext:
      options.secret === undefined ? null : encryptSecret(app.keyRing.keyFor('webhook-encryption'), options.secret, id),
  })
  return site
}

export function blockedEvent(siteId: string) {
  return {
    siteId,
    timestamp: new Date('2025-06-07T08:09:10.111Z'),
    riskScore: 91,
    anomalies: ['datacenter_ip', 'vpn_detected'],
    countryCode: 'NL',
    verificationId: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
    device: '9f8e7d6c5b4a39281706f5e4',
    hostname: 'shop.example',
    pageAction: 'login',
  }
}

/**
 * One verification through the public API as a browser page of shop.example would send it
 * (origin, a browser's user agent and signals, pageAction checkout), its challenge solved: on a
 * site with blockThreshold 1 it is blocked. Resolves with the answer and how long verify took.
 */
export async function verifyFromShop(app: App, siteKey: string): Promise<{ answer: LightMyRequestResponse; elapsedMs: number }> {
  const challenge = await app.inject({ method: 'POST', url: '/api/v1/challenge', headers: { 'x-site-key': siteKey } })
  if (challenge.statusCode !== 200) throw new Error(`no challenge: ${challenge.body}`)
  const { challengeId, challenge: hash, difficulty } = challenge.json<{ challengeId: string; challenge: string; difficulty: number }>()
  const started = performance.now()
  const answer = await app.inject({
    method: 'POST',
    url: '/api/v1/verify',
    headers: {
      'x-site-key': siteKey,
      origin: 'https://shop.example',
      'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36',
    },
    payload: {
      challengeId,
      nonce: solveChallenge({ challenge: hash, difficulty }),
      solveTimeMs: 40,
      fingerprint: { canvas: 'c2d1', webgl: 'ANGLE' },
      behaviorData: { mouseMovements: 12, keystrokes: 3 },
      pageAction: 'checkout',
    },
  })
  return { answer, elapsedMs: performance.now() - started }
}

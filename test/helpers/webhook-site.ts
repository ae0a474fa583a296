import { randomUUID } from 'node:crypto'
import type { App } from '../../src/app.js'
import { encryptSecret } from '../../src/domain/secret-box.js'
import type { Site, SiteSettings } from '../../src/domain/sites/site.js'

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

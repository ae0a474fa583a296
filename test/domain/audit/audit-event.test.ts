import { describe, expect, it } from 'vitest'
import { nonDefaultSettingsOf, redactWebhookUrl, siteChangesBetween } from '../../../src/domain/audit/audit-event.js'
import { withDefaultSettings } from '../../../src/domain/sites/site.js'

type PreviousWebhookSecret = { ciphertext: string; expiresAt: Date } | null
const site = (changes: { name?: string; domains?: string[]; settings?: object; webhookSecretCiphertext?: string | null; previousWebhookSecret?: PreviousWebhookSecret } = {}) => ({
  name: changes.name ?? 'Shop',
  domains: changes.domains ?? ['shop.example'],
  settings: withDefaultSettings(changes.settings ?? {}),
  webhookSecretCiphertext: changes.webhookSecretCiphertext ?? null,
  previousWebhookSecret: changes.previousWebhookSecret ?? null,
})

describe("a site's changes as the audit log records them", () => {
  it('are none between equal sites, whatever order the stored settings were written in', () => {
    expect(siteChangesBetween(site(), site(), false)).toEqual([])
    const events = site({ settings: { webhookEvents: ['verification.blocked', 'surge.started'] } })
    expect(siteChangesBetween(events, site({ settings: { webhookEvents: ['verification.blocked', 'surge.started'] } }), false)).toEqual([])
  })

  it('name each changed field with its values before and after, a setting cleared back to its default too', () => {
    const before = site({ settings: { blockThreshold: 60, allowedAddresses: ['203.0.113.0/24'] } })
    const after = site({ name: 'Shop (EU)', domains: ['shop.example', 'eu.shop.example'], settings: { allowedAddresses: [] } })
    expect(siteChangesBetween(before, after, false)).toEqual([
      { field: 'name', from: 'Shop', to: 'Shop (EU)' },
      { field: 'domains', from: ['shop.example'], to: ['shop.example', 'eu.shop.example'] },
      { field: 'blockThreshold', from: 60, to: 70 },
      { field: 'allowedAddresses', from: ['203.0.113.0/24'], to: [] },
    ])
  })

  it('say whether a webhook secret was set before and after, never what it is, and count a secret sent again', () => {
    const sealed = site({ webhookSecretCiphertext: 'sealed-secret-one' })
    expect(siteChangesBetween(site(), sealed, true)).toEqual([{ field: 'webhookSecret', from: false, to: true }])
    expect(siteChangesBetween(sealed, site({ webhookSecretCiphertext: 'sealed-secret-two' }), true)).toEqual([{ field: 'webhookSecret', from: true, to: true }])
    expect(siteChangesBetween(sealed, site(), false)).toEqual([{ field: 'webhookSecret', from: true, to: false }])
    expect(siteChangesBetween(sealed, sealed, false)).toEqual([])
    expect(JSON.stringify(siteChangesBetween(site(), sealed, true))).not.toContain('sealed-secret')
  })

  it("say until when the replaced webhook secret signs, and when that ends early, never what it is", () => {
    const now = Date.parse('2026-06-07T08:00:00Z')
    const overlapping = (expiresAt: string) => site({ webhookSecretCiphertext: 'sealed-secret-two', previousWebhookSecret: { ciphertext: 'sealed-secret-one', expiresAt: new Date(expiresAt) } })
    const replaced = overlapping('2026-06-08T08:00:00Z')
    expect(siteChangesBetween(site({ webhookSecretCiphertext: 'sealed-secret-one' }), replaced, true, now)).toEqual([
      { field: 'webhookSecret', from: true, to: true },
      { field: 'previousWebhookSecret', from: null, to: '2026-06-08T08:00:00.000Z' },
    ])
    const ended = site({ webhookSecretCiphertext: 'sealed-secret-two' })
    expect(siteChangesBetween(replaced, ended, false, now)).toEqual([{ field: 'previousWebhookSecret', from: '2026-06-08T08:00:00.000Z', to: null }])
    // An overlap over already changes nothing when it is cleared.
    expect(siteChangesBetween(overlapping('2026-06-07T07:00:00Z'), ended, false, now)).toEqual([])
    expect(JSON.stringify(siteChangesBetween(replaced, ended, false, now))).not.toContain('sealed-secret')
  })

  it("keep a webhook URL's origin and a digest of the rest, which may be a chat service's own secret", () => {
    const slack = 'https://hooks.slack.com/services/T000/B000/XXXXSECRETXXXX'
    const changes = siteChangesBetween(site(), site({ settings: { webhookUrl: slack } }), false)
    expect(changes).toEqual([{ field: 'webhookUrl', from: null, to: expect.stringMatching(/^https:\/\/hooks\.slack\.com\/… \([0-9a-f]{8}\)$/) }])
    expect(JSON.stringify(changes)).not.toContain('SECRET')
    expect(redactWebhookUrl('https://hooks.example/')).toBe('https://hooks.example')
    expect(redactWebhookUrl('https://user:password@hooks.example/')).toMatch(/^https:\/\/hooks\.example\/… \([0-9a-f]{8}\)$/)
    // Two URLs on one host stay apart.
    expect(redactWebhookUrl(`${slack}1`)).not.toBe(redactWebhookUrl(slack))
  })

  it("of a new site, are the settings that are not the defaults, from the defaults", () => {
    expect(nonDefaultSettingsOf(site())).toEqual([])
    expect(nonDefaultSettingsOf(site({ settings: { difficulty: 20 }, webhookSecretCiphertext: 'sealed' }))).toEqual([
      { field: 'difficulty', from: 18, to: 20 },
      { field: 'webhookSecret', from: false, to: true },
    ])
  })
})

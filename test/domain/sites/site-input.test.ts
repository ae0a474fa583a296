import { describe, expect, it } from 'vitest'
import { defaultSiteSettings } from '../../../src/domain/sites/site.js'
import {
  initialSettingsOf,
  normalizeDomains,
  normalizeHostname,
  normalizeSiteInput,
  settingsChangesOf,
  validateMergedSettings,
  validateSettingsInput,
} from '../../../src/domain/sites/site-input.js'
import { isOriginAllowed, readRequestOrigin } from '../../../src/domain/public-access/request-origin.js'

const lenient = { isHttpsRequired: false, allowPrivateWebhooks: true }
const strict = { isHttpsRequired: true, allowPrivateWebhooks: false }

describe('hostnames', () => {
  it.each([
    ['example.com', 'example.com'],
    ['  Shop.Example.COM. ', 'shop.example.com'],
    ['localhost', 'localhost'],
    ['127.0.0.1', '127.0.0.1'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['a-b.example', 'a-b.example'],
    ['::1', '::1'],
    ['[::1]', '::1'],
    ['[2001:DB8:0:0::1]', '2001:db8::1'],
  ])('normalizes %j to %j', (entry, expected) => {
    expect(normalizeHostname(entry)).toBe(expected)
  })

  it('lists an IPv6 address as the origin of a page on it is read (development on http://[::1])', () => {
    const listed = normalizeHostname('[::1]') ?? ''
    expect(isOriginAllowed(readRequestOrigin('http://[::1]:5173', undefined), [listed])).toBe(true)
    expect(isOriginAllowed(readRequestOrigin('http://[::2]:5173', undefined), [listed])).toBe(false)
  })

  it.each(['', 'https://example.com', 'example.com/path', 'example.com:443', '*.example.com', 'exa mple.com', '-bad.example', 'a..b', 'user@example.com', `${'a'.repeat(64)}.example`, 'exa%41mple.com', '[::1', '[example.com]', '::g', 'fe80::1%eth0', '[fe80::1%25eth0]', '[fe80::1%eth0]'])(
    'refuses %j',
    (entry) => {
      expect(normalizeHostname(entry)).toBeUndefined()
    },
  )

  it('deduplicates and names each bad entry by index', () => {
    // A wildcard or an address says which hostname was meant: the error names it.
    expect(normalizeDomains(['*.client01.example', 'https://Shop.example:8443/cart', 'client02.example:3000', 'a b']).issues).toEqual([
      { field: 'domains.0', message: 'subdomains are included without a wildcard: list client01.example (got "*.client01.example")' },
      { field: 'domains.1', message: 'the scheme, port and path are not compared: list shop.example (got "https://Shop.example:8443/cart")' },
      { field: 'domains.2', message: 'the scheme, port and path are not compared: list client02.example (got "client02.example:3000")' },
      { field: 'domains.3', message: 'must be a hostname such as example.com, without scheme, port, path or wildcard (got "a b")' },
    ])
    expect(normalizeDomains(['http://localhost:5173', 'http://[::1]:8080/']).issues.map((issue) => issue.message)).toEqual([
      'the scheme, port and path are not compared: list localhost (got "http://localhost:5173")',
      'the scheme, port and path are not compared: list ::1 (got "http://[::1]:8080/")',
    ])
    expect(normalizeDomains(['*.*.example', 'user@example.com']).issues.map((issue) => issue.message)).toEqual([
      expect.stringMatching(/^must be a hostname/),
      expect.stringMatching(/^must be a hostname/),
    ])
    // The opaque origin of sandboxed frames and apps: listing it would admit only a host named null.
    expect(normalizeDomains(['shop.example', 'NULL', 'null.example']).issues).toEqual([
      { field: 'domains.1', message: expect.stringMatching(/^cannot admit the origin null .+docs\/apps\.md\)$/) },
    ])
    expect(normalizeDomains(['A.example', 'a.example', 'bad/entry', 'b.example'])).toEqual({
      domains: ['a.example', 'b.example'],
      issues: [{ field: 'domains.2', message: expect.stringContaining('hostname') }],
    })
  })
})

describe('settings input', () => {
  it('accepts values at the edges of every range', () => {
    const settings = { difficulty: 1, challengeLifetimeSeconds: 3600, challengeThreshold: 0, blockThreshold: 100, maxStepUps: 5 }
    expect(validateSettingsInput(settings, lenient)).toEqual([])
    expect(validateSettingsInput({ difficulty: 32, challengeLifetimeSeconds: 10, maxStepUps: 0 }, lenient)).toEqual([])
  })

  it('names every value out of range', () => {
    const issues = validateSettingsInput({ difficulty: 33, challengeLifetimeSeconds: 9, challengeThreshold: -1, blockThreshold: 101, maxStepUps: 6 }, lenient)
    expect(issues.map((issue) => issue.field)).toEqual([
      'settings.difficulty',
      'settings.challengeLifetimeSeconds',
      'settings.challengeThreshold',
      'settings.blockThreshold',
      'settings.maxStepUps',
    ])
  })

  it('checks webhook URLs and secrets', () => {
    expect(validateSettingsInput({ webhookUrl: 'https://hooks.example.com/x', webhookSecret: 'a6Kq-9zP3wXr0TmB' }, strict)).toEqual([])
    expect(validateSettingsInput({ webhookUrl: 'http://hooks.example.com/x' }, lenient)).toEqual([])
    expect(validateSettingsInput({ webhookUrl: 'http://hooks.example.com/x' }, strict)).toEqual([{ field: 'settings.webhookUrl', message: 'must use https' }])
    expect(validateSettingsInput({ webhookUrl: 'hooks.example.com' }, lenient)[0]?.field).toBe('settings.webhookUrl')
    expect(validateSettingsInput({ webhookUrl: 'javascript:alert(1)' }, lenient)[0]?.field).toBe('settings.webhookUrl')
    expect(validateSettingsInput({ webhookSecret: 'a6Kq-9zP3wXr0Tm' }, lenient)[0]?.field).toBe('settings.webhookSecret')
    expect(validateSettingsInput({ webhookUrl: null, webhookSecret: null }, strict)).toEqual([])
  })

  it.each([
    [' '.repeat(16), 'must not begin or end with white space'],
    ['a6Kq-9zP3wXr0TmB\n', 'must not begin or end with white space'],
    ['x'.repeat(16), 'must contain at least 8 different characters (use a random secret)'],
    ['abcabcabcabcabcabc', 'must contain at least 8 different characters (use a random secret)'],
  ])('refuses the webhook secret %j: %s', (webhookSecret, message) => {
    expect(validateSettingsInput({ webhookSecret }, lenient)).toEqual([{ field: 'settings.webhookSecret', message }])
  })

  it('refuses a webhook URL naming an address every delivery would be refused at, when it is saved', () => {
    // Metadata and link-local addresses always; private ones where WEBHOOK_ALLOW_PRIVATE is off.
    expect(validateSettingsInput({ webhookUrl: 'http://169.254.169.254/latest/meta-data/' }, lenient)).toEqual([
      { field: 'settings.webhookUrl', message: expect.stringMatching(/^points at a .* address \(169\.254\.169\.254\)$/) },
    ])
    expect(validateSettingsInput({ webhookUrl: 'https://10.0.0.1/hooks' }, strict)[0]?.message).toMatch(/^points at a private/)
    expect(validateSettingsInput({ webhookUrl: 'http://10.0.0.1/hooks' }, lenient)).toEqual([])
    // Names are judged at delivery, by the addresses they resolve to.
    expect(validateSettingsInput({ webhookUrl: 'https://localhost.example/hooks' }, strict)).toEqual([])
  })

  it('checks the merged settings: thresholds in order, a secret for every webhook URL', () => {
    expect(validateMergedSettings(defaultSiteSettings, false)).toEqual([])
    // Thresholds out of order: both fields are named, whichever the operator changed.
    expect(validateMergedSettings({ ...defaultSiteSettings, challengeThreshold: 70 }, false).map((issue) => issue.field)).toEqual([
      'settings.challengeThreshold',
      'settings.blockThreshold',
    ])
    expect(validateMergedSettings({ ...defaultSiteSettings, webhookUrl: 'https://x.example' }, false)[0]?.field).toBe('settings.webhookSecret')
    expect(validateMergedSettings({ ...defaultSiteSettings, webhookUrl: 'https://x.example' }, true)).toEqual([])
  })

  it('keeps the webhook secret out of the stored settings', () => {
    expect(settingsChangesOf({ webhookUrl: 'https://x.example', webhookSecret: 'a6Kq-9zP3wXr0TmB', difficulty: null })).toEqual({
      webhookUrl: 'https://x.example',
      difficulty: null,
    })
    expect(initialSettingsOf({ webhookSecret: 'a6Kq-9zP3wXr0TmB', difficulty: null, maxStepUps: 0 })).toEqual({ maxStepUps: 0 })
  })

  it('normalizes a whole request and collects every issue', () => {
    const { value, issues } = normalizeSiteInput({ name: '  Shop ', domains: ['X.example'], settings: { difficulty: 0 } }, lenient)
    expect(value).toEqual({ name: 'Shop', domains: ['x.example'], settings: { difficulty: 0 } })
    expect(issues).toEqual([{ field: 'settings.difficulty', message: 'must be an integer from 1 to 32' }])
  })
})

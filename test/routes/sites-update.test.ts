import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decryptSecret } from '../../src/domain/secret-box.js'
import { asBrowser, asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

interface SiteAnswer {
  name: string
  domains: string[]
  settings: Record<string, unknown>
  updatedAt: string
}

const webhookSecret = 'whsec-0123456789abcdef'

describe('PUT /api/v1/sites/{id}', () => {
  let service: TestApp
  let account: TestAccount
  beforeAll(async () => {
    service = await buildTestApp()
    account = await createTestAccount(service.app)
  })
  afterAll(() => service.close())

  const update = (id: string, payload: object, headers: Record<string, string> = asScript(account)) =>
    service.app.inject({ method: 'PUT', url: `/api/v1/sites/${id}`, headers, payload })
  const read = async (id: string) => (await service.app.inject({ method: 'GET', url: `/api/v1/sites/${id}`, headers: asScript(account) })).json<SiteAnswer>()

  it("takes the spec's body {settings: {webhookUrl, webhookSecret}} and never shows the secret", async () => {
    const site = await createTestSite(service.app, account)
    const response = await update(site.id, { settings: { webhookUrl: 'https://hooks.example.com/blocked', webhookSecret } }, asBrowser(account))
    expect(response.statusCode).toBe(200)
    expect(response.body).not.toContain(webhookSecret)
    expect(response.json().settings).toMatchObject({ webhookUrl: 'https://hooks.example.com/blocked', webhookSecretSet: true })
    const readBack = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}`, headers: asScript(account) })
    expect(readBack.body).not.toContain(webhookSecret)
    expect(readBack.json()).toEqual(response.json())
    const stored = await service.app.sites.findById(site.id)
    const key = service.app.keyRing.keyFor('webhook-encryption')
    expect(decryptSecret(key, stored?.webhookSecretCiphertext ?? '', site.id)).toBe(webhookSecret)
    expect(Date.parse(response.json<SiteAnswer>().updatedAt)).toBeGreaterThanOrEqual(Date.parse(site.updatedAt))
  })

  it('merges: absent fields keep their values, settings merge key by key', async () => {
    const site = await createTestSite(service.app, account, {
      name: 'Before',
      domains: ['before.example'],
      settings: { webhookUrl: 'https://hooks.example.com/a', webhookSecret, difficulty: 21, maxStepUps: 0 },
    })
    const renamed = await update(site.id, { name: 'After' })
    expect(renamed.statusCode).toBe(200)
    expect(renamed.json()).toMatchObject({ name: 'After', domains: ['before.example'], settings: site.settings })
    const tuned = await update(site.id, { settings: { challengeThreshold: 0, blockThreshold: 95 } })
    expect(tuned.json().settings).toEqual({ ...site.settings, challengeThreshold: 0, blockThreshold: 95 })
    expect(tuned.json().name).toBe('After')
    const moved = await update(site.id, { domains: ['New.Example', 'other.example'] })
    expect(moved.json().domains).toEqual(['new.example', 'other.example'])
    expect(await read(site.id)).toMatchObject({ name: 'After', domains: ['new.example', 'other.example'], settings: tuned.json().settings })
  })

  it('clears a setting with null: it falls back to its default', async () => {
    const site = await createTestSite(service.app, account, { settings: { difficulty: 25, challengeLifetimeSeconds: 300, maxStepUps: 4 } })
    const response = await update(site.id, { settings: { difficulty: null, maxStepUps: null } })
    expect(response.statusCode).toBe(200)
    expect(response.json().settings).toMatchObject({ difficulty: 18, maxStepUps: 2, challengeLifetimeSeconds: 300 })
  })

  it('chooses the webhook\'s events: known kinds only, each once, in a fixed order; null restores verification.blocked alone', async () => {
    const site = await createTestSite(service.app, account)
    expect((await read(site.id)).settings).toMatchObject({ webhookEvents: ['verification.blocked'] })
    const chosen = await update(site.id, { settings: { webhookEvents: ['surge.ended', 'verification.blocked', 'surge.started', 'surge.ended'] } })
    expect(chosen.statusCode, chosen.body).toBe(200)
    expect(chosen.json().settings.webhookEvents).toEqual(['verification.blocked', 'surge.started', 'surge.ended'])
    expect((await update(site.id, { settings: { webhookEvents: [] } })).json().settings.webhookEvents).toEqual([])
    const unknown = await update(site.id, { settings: { webhookEvents: ['surge.started', 'surge.begun'] } })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json().error).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'settings.webhookEvents.1', message: 'must be one of verification.blocked, surge.started, surge.ended' }],
    })
    expect((await read(site.id)).settings.webhookEvents).toEqual([])
    expect((await update(site.id, { settings: { webhookEvents: null } })).json().settings.webhookEvents).toEqual(['verification.blocked'])
  })

  it("takes a help link for blocked visitors (https or mailto:), audits it, refuses any other scheme or a long one, and clears it with null", async () => {
    const site = await createTestSite(service.app, account)
    expect((await read(site.id)).settings.blockedHelpUrl).toBeNull()
    const https = await update(site.id, { settings: { blockedHelpUrl: 'https://help.example.com/contact?topic=gate' } })
    expect(https.statusCode, https.body).toBe(200)
    expect(https.json().settings.blockedHelpUrl).toBe('https://help.example.com/contact?topic=gate')
    const audit = await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?siteId=${site.id}&action=site.updated`, headers: asScript(account) })
    expect(audit.json().items[0].details.changes).toContainEqual({ field: 'blockedHelpUrl', from: null, to: 'https://help.example.com/contact?topic=gate' })
    const mail = await update(site.id, { settings: { blockedHelpUrl: 'mailto:help@example.com?subject=Blocked' } })
    expect(mail.statusCode, mail.body).toBe(200)
    expect((await read(site.id)).settings.blockedHelpUrl).toBe('mailto:help@example.com?subject=Blocked')

    const refused = {
      'javascript:alert(1)': 'must be an https URL such as https://example.com/help or a mailto: address such as mailto:help@example.com',
      'http://help.example.com/': 'must use https (plain http only for localhost in development)',
      'mailto:': 'must name an address after mailto: (mailto:help@example.com)',
      'help.example.com': 'must be an https URL such as https://example.com/help or a mailto: address such as mailto:help@example.com',
      [`https://help.example.com/${'a'.repeat(480)}`]: 'must be at most 500 characters',
    }
    for (const [blockedHelpUrl, message] of Object.entries(refused)) {
      const response = await update(site.id, { settings: { blockedHelpUrl } })
      expect(response.statusCode, blockedHelpUrl).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'validation_error', details: [{ field: 'settings.blockedHelpUrl', message }] })
    }
    expect((await read(site.id)).settings.blockedHelpUrl).toBe('mailto:help@example.com?subject=Blocked')
    const cleared = await update(site.id, { settings: { blockedHelpUrl: null } })
    expect(cleared.json().settings.blockedHelpUrl).toBeNull()
  })

  it("takes the check of tokens' addresses (off, report, refuse), audits it, refuses any other value and restores off with null", async () => {
    const site = await createTestSite(service.app, account)
    expect((await read(site.id)).settings.tokenAddressCheck).toBe('off')
    const refusing = await update(site.id, { settings: { tokenAddressCheck: 'refuse' } })
    expect(refusing.statusCode, refusing.body).toBe(200)
    expect(refusing.json().settings.tokenAddressCheck).toBe('refuse')
    const audit = await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?siteId=${site.id}&action=site.updated`, headers: asScript(account) })
    expect(audit.json().items[0].details.changes).toContainEqual({ field: 'tokenAddressCheck', from: 'off', to: 'refuse' })
    for (const tokenAddressCheck of ['Refuse', 'on', '', 1, true]) {
      const response = await update(site.id, { settings: { tokenAddressCheck } })
      expect(response.statusCode, JSON.stringify(tokenAddressCheck)).toBe(400)
      expect(response.json().error.code).toBe('validation_error')
      expect(response.json().error.details[0].field).toBe('settings.tokenAddressCheck')
    }
    expect((await read(site.id)).settings.tokenAddressCheck).toBe('refuse')
    expect((await update(site.id, { settings: { tokenAddressCheck: null } })).json().settings.tokenAddressCheck).toBe('off')
    const created = await service.app.inject({ method: 'POST', url: '/api/v1/sites', headers: asScript(account), payload: { name: 'Bound', settings: { tokenAddressCheck: 'report' } } })
    expect(created.statusCode, created.body).toBe(201)
    expect(created.json().settings.tokenAddressCheck).toBe('report')
  })

  it('creates a site with a help link for blocked visitors, and refuses one with a script scheme', async () => {
    const created = await service.app.inject({
      method: 'POST', url: '/api/v1/sites', headers: asScript(account),
      payload: { name: 'Helped', settings: { blockedHelpUrl: 'http://localhost:8080/help' } },
    })
    expect(created.statusCode, created.body).toBe(201)
    expect(created.json().settings.blockedHelpUrl).toBe('http://localhost:8080/help')
    const refused = await service.app.inject({
      method: 'POST', url: '/api/v1/sites', headers: asScript(account),
      payload: { name: 'Scripted', settings: { blockedHelpUrl: 'javascript:alert(1)' } },
    })
    expect(refused.statusCode).toBe(400)
    expect(refused.json().error.details).toContainEqual({ field: 'settings.blockedHelpUrl', message: expect.stringContaining('https URL') })
  })

  it('removes the webhook with webhookUrl: null, its secret with it (audited); a URL set again needs a secret again', async () => {
    const site = await createTestSite(service.app, account, { settings: { webhookUrl: 'https://hooks.example.com/x', webhookSecret } })
    const withoutUrl = await update(site.id, { settings: { webhookUrl: null } })
    expect(withoutUrl.statusCode).toBe(200)
    expect(withoutUrl.json().settings).toMatchObject({ webhookUrl: null, webhookSecretSet: false })
    expect((await service.app.sites.findById(site.id))?.webhookSecretCiphertext).toBeNull()
    const audit = await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?siteId=${site.id}&action=site.updated`, headers: asScript(account) })
    expect(audit.json().items[0].details.changes).toContainEqual({ field: 'webhookSecret', from: true, to: false })

    const urlAlone = await update(site.id, { settings: { webhookUrl: 'https://hooks.example.com/x' } })
    expect(urlAlone.statusCode).toBe(400)
    expect(urlAlone.json().error.details).toContainEqual({ field: 'settings.webhookSecret', message: expect.stringContaining('required') })
  })

  it('keeps a secret sent with the URL removal, and removes a secret alone with webhookSecret: null', async () => {
    const site = await createTestSite(service.app, account, { settings: { webhookUrl: 'https://hooks.example.com/x', webhookSecret } })
    const replaced = await update(site.id, { settings: { webhookUrl: null, webhookSecret: 'a-new-secret-0123456789' } })
    expect(replaced.json().settings).toMatchObject({ webhookUrl: null, webhookSecretSet: true })
    const withoutSecret = await update(site.id, { settings: { webhookSecret: null } })
    expect(withoutSecret.json().settings).toMatchObject({ webhookUrl: null, webhookSecretSet: false })
  })

  it('accepts a new webhook URL alone when a secret is stored already, and replaces the secret alone', async () => {
    const site = await createTestSite(service.app, account, { settings: { webhookUrl: 'https://hooks.example.com/x', webhookSecret } })
    const moved = await update(site.id, { settings: { webhookUrl: 'https://hooks.example.com/y' } })
    expect(moved.statusCode).toBe(200)
    const newSecret = 'another-secret-0123456789'
    expect((await update(site.id, { settings: { webhookSecret: newSecret } })).statusCode).toBe(200)
    const stored = await service.app.sites.findById(site.id)
    expect(decryptSecret(service.app.keyRing.keyFor('webhook-encryption'), stored?.webhookSecretCiphertext ?? '', site.id)).toBe(newSecret)
  })

  it.each([
    [{ settings: { webhookUrl: 'not a url', webhookSecret } }, 'settings.webhookUrl'],
    [{ settings: { webhookUrl: 'ftp://hooks.example.com', webhookSecret } }, 'settings.webhookUrl'],
    [{ settings: { webhookUrl: 'https://user:pass@hooks.example.com', webhookSecret } }, 'settings.webhookUrl'],
    [{ settings: { webhookUrl: 'https://hooks.example.com' } }, 'settings.webhookSecret'],
    [{ settings: { webhookUrl: 'https://hooks.example.com', webhookSecret: 'too-short' } }, 'settings.webhookSecret'],
    [{ settings: { webhookSecret: 'x'.repeat(257) } }, 'settings.webhookSecret'],
    [{ settings: { webhookUrl: 'https://hooks.example.com', webhookSecret: ' '.repeat(16) } }, 'settings.webhookSecret'],
    [{ settings: { challengeThreshold: -1 } }, 'settings.challengeThreshold'],
    [{ settings: { blockThreshold: 101 } }, 'settings.blockThreshold'],
    [{ settings: { challengeThreshold: 70 } }, 'settings.challengeThreshold'],
    [{ settings: { challengeThreshold: 80, blockThreshold: 60 } }, 'settings.challengeThreshold'],
    [{ settings: { difficulty: 0 } }, 'settings.difficulty'],
    [{ settings: { difficulty: 33 } }, 'settings.difficulty'],
    [{ settings: { challengeLifetimeSeconds: 5 } }, 'settings.challengeLifetimeSeconds'],
    [{ settings: { challengeLifetimeSeconds: 3601 } }, 'settings.challengeLifetimeSeconds'],
    [{ settings: { maxStepUps: 6 } }, 'settings.maxStepUps'],
    [{ settings: { surgeChallengesPerMinute: -1 } }, 'settings.surgeChallengesPerMinute'],
    [{ settings: { surgeChallengesPerMinute: 10_000_001 } }, 'settings.surgeChallengesPerMinute'],
    [{ settings: { difficulty: 20.5 } }, 'settings.difficulty'],
    [{ domains: ['http://example.com/'] }, 'domains.0'],
    [{ domains: ['exa mple.com'] }, 'domains.0'],
    [{ name: '  ' }, 'name'],
    [{ name: null }, 'name'],
    [{ settings: { webhookSecretSet: true } }, 'settings.webhookSecretSet'],
  ])('answers 400 validation_error with details for %j and changes nothing', async (payload, field) => {
    const site = await createTestSite(service.app, account)
    const before = await read(site.id)
    const response = await update(site.id, payload)
    expect(response.statusCode).toBe(400)
    const error = response.json().error
    expect(error.code).toBe('validation_error')
    expect(error.message).toEqual(expect.any(String))
    expect(error.details).toContainEqual({ field, message: expect.any(String) })
    expect(await read(site.id)).toEqual(before)
  })

  it('checks the merged result: removing the secret of a site that has a webhook URL is refused', async () => {
    const site = await createTestSite(service.app, account, { settings: { webhookUrl: 'https://hooks.example.com/x', webhookSecret } })
    const response = await update(site.id, { settings: { webhookSecret: null } })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.details).toContainEqual({ field: 'settings.webhookSecret', message: expect.stringContaining('required') })
    expect((await read(site.id)).settings.webhookSecretSet).toBe(true)
  })

  it('reports every problem of a request at once', async () => {
    const site = await createTestSite(service.app, account)
    const response = await update(site.id, { name: '', domains: ['a/b'], settings: { difficulty: 99, webhookUrl: 'nope' } })
    const fields = response.json<{ error: { details: { field: string }[] } }>().error.details.map((detail) => detail.field)
    expect(fields).toEqual(expect.arrayContaining(['name', 'domains.0', 'settings.difficulty', 'settings.webhookUrl']))
  })

  it('allows plain-http webhooks in development and test', async () => {
    const site = await createTestSite(service.app, account)
    const response = await update(site.id, { settings: { webhookUrl: 'http://localhost:9999/hook', webhookSecret } })
    expect(response.statusCode).toBe(200)
  })
})

describe.each([
  ['NODE_ENV=production', { NODE_ENV: 'production' }],
  ['WEBHOOK_ALLOW_PRIVATE=false', { WEBHOOK_ALLOW_PRIVATE: 'false' }],
])('PUT /api/v1/sites/{id} with %s', (_name, env) => {
  let service: TestApp
  let account: TestAccount
  beforeAll(async () => {
    service = await buildTestApp({ env })
    account = await createTestAccount(service.app)
  })
  afterAll(() => service.close())

  it('refuses a plain-http webhook URL and accepts https', async () => {
    const site = await createTestSite(service.app, account)
    const update = (webhookUrl: string) =>
      service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(account), payload: { settings: { webhookUrl, webhookSecret } } })
    const plain = await update('http://hooks.example.com/x')
    expect(plain.statusCode).toBe(400)
    expect(plain.json().error.details).toEqual([{ field: 'settings.webhookUrl', message: 'must use https' }])
    expect((await update('https://hooks.example.com/x')).statusCode).toBe(200)
  })
})

describe.each(deployments)('If-Match on PUT /api/v1/sites/{id}, on $name', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp(options)
    account = await createTestAccount(service.app)
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  const update = (id: string, payload: object, ifMatch?: string) =>
    service.app.inject({
      method: 'PUT',
      url: `/api/v1/sites/${id}`,
      headers: { ...asScript(account), ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }) },
      payload,
    })
  const read = (id: string) => service.app.inject({ method: 'GET', url: `/api/v1/sites/${id}`, headers: asScript(account) })

  it.skipIf(!available)('refuses a save based on a stale read (412 precondition_failed) and keeps the other save', async () => {
    const site = await createTestSite(service.app, account, { domains: ['shop.example'] })
    const etag = (await read(site.id)).headers.etag as string
    expect(etag).toMatch(/^"\d+"$/)
    // Two tabs read the site; the first adds a domain, the second, unaware, saves its own list.
    const first = await update(site.id, { domains: ['shop.example', 'first.example'] }, etag)
    expect(first.statusCode).toBe(200)
    expect(first.headers.etag).not.toBe(etag)
    const second = await update(site.id, { domains: ['shop.example', 'second.example'] }, etag)
    expect(second.statusCode).toBe(412)
    expect(second.json().error.code).toBe('precondition_failed')
    const now = await read(site.id)
    expect(now.json().domains).toEqual(['shop.example', 'first.example'])
    expect(now.headers.etag).toBe(first.headers.etag)
    // Read again, the second save goes through.
    const retried = await update(site.id, { domains: ['shop.example', 'first.example', 'second.example'] }, now.headers.etag)
    expect(retried.statusCode).toBe(200)
    expect(retried.json().domains).toEqual(['shop.example', 'first.example', 'second.example'])
  })

  it.skipIf(!available)('of two saves with the same ETag at once, exactly one is made', async () => {
    const site = await createTestSite(service.app, account)
    const etag = (await read(site.id)).headers.etag as string
    const answers = await Promise.all(['a', 'b', 'c', 'd'].map((name) => update(site.id, { name }, etag)))
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 412, 412, 412])
    const made = answers.find((answer) => answer.statusCode === 200)
    expect((await read(site.id)).json().name).toBe(made?.json().name)
  })

  it.skipIf(!available)('counts every change: a rotation of the secret also makes an earlier ETag stale', async () => {
    const site = await createTestSite(service.app, account)
    const etag = (await read(site.id)).headers.etag as string
    const rotation = await service.app.inject({
      method: 'POST',
      url: `/api/v1/sites/${site.id}/secret/rotate`,
      headers: asScript(account),
      payload: {},
    })
    expect(rotation.statusCode).toBe(200)
    expect((await update(site.id, { name: 'Stale' }, etag)).statusCode).toBe(412)
    expect((await read(site.id)).json().name).toBe(site.name)
  })

  it.skipIf(!available)('without If-Match, or with *, saves as before; a weak or malformed tag matches nothing', async () => {
    const site = await createTestSite(service.app, account)
    const created = (await read(site.id)).headers.etag as string
    expect((await update(site.id, { name: 'No condition' })).statusCode).toBe(200)
    expect((await update(site.id, { name: 'Any' }, '*')).statusCode).toBe(200)
    const current = (await read(site.id)).headers.etag as string
    expect((await update(site.id, { name: 'Listed' }, `${created}, ${current}`)).statusCode).toBe(200)
    const latest = (await read(site.id)).headers.etag as string
    for (const tag of [`W/${latest}`, latest.slice(1, -1), '"x"']) {
      const refused = await update(site.id, { name: 'Weak' }, tag)
      expect(refused.statusCode, tag).toBe(412)
    }
    expect((await read(site.id)).json().name).toBe('Listed')
  })

  const siteUpdates = async (id: string) => {
    const log = await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?siteId=${id}&action=site.updated`, headers: asScript(account) })
    expect(log.statusCode, log.body).toBe(200)
    return log.json<{ items: { details: { changes: object[] } }[] }>().items
  }

  it.skipIf(!available)('changes nothing for a request that sets what is stored: same ETag and updatedAt, no audit event', async () => {
    const secret = 'whsec-noop-0123456789abcdef'
    const site = await createTestSite(service.app, account, {
      domains: ['shop.example'],
      settings: { difficulty: 16, webhookUrl: 'https://hooks.example.com/in', webhookSecret: secret },
    })
    const before = await read(site.id)
    const etag = before.headers.etag as string
    const eventsBefore = (await siteUpdates(site.id)).length
    for (const payload of [
      {},
      { settings: { difficulty: 16 } },
      { settings: {} },
      { name: site.name, domains: ['SHOP.example'] },
      { settings: { webhookSecret: secret } },
      { settings: { webhookUrl: 'https://hooks.example.com/in', webhookSecret: secret, previousWebhookSecretExpiresAt: null } },
      { settings: { surgeChallengesPerMinute: null } },
    ]) {
      for (const ifMatch of [undefined, etag]) {
        const answer = await update(site.id, payload, ifMatch)
        expect(answer.statusCode, JSON.stringify(payload)).toBe(200)
        expect(answer.headers.etag, JSON.stringify(payload)).toBe(etag)
        expect(answer.json(), JSON.stringify(payload)).toEqual(before.json())
      }
    }
    const after = await read(site.id)
    expect(after.headers.etag).toBe(etag)
    expect(after.json().updatedAt).toBe(before.json().updatedAt)
    expect(await siteUpdates(site.id)).toHaveLength(eventsBefore)
    // A real change still counts.
    const changed = await update(site.id, { settings: { difficulty: 17 } })
    expect(changed.statusCode).toBe(200)
    expect(changed.headers.etag).not.toBe(etag)
    expect(Date.parse(changed.json<SiteAnswer>().updatedAt)).toBeGreaterThanOrEqual(Date.parse(before.json<SiteAnswer>().updatedAt))
    expect(await siteUpdates(site.id)).toHaveLength(eventsBefore + 1)
    // A stale If-Match is still refused, even for a request that would change nothing.
    expect((await update(site.id, { settings: { difficulty: 17 } }, etag)).statusCode).toBe(412)
    // A new webhook secret is a change.
    const replaced = await update(site.id, { settings: { webhookSecret: 'whsec-another-0123456789' } }, changed.headers.etag)
    expect(replaced.statusCode).toBe(200)
    expect(replaced.headers.etag).not.toBe(changed.headers.etag)
    expect((await siteUpdates(site.id))[0]?.details.changes).toContainEqual({ field: 'webhookSecret', from: true, to: true })
  })

  it.skipIf(!available)('a request that changes nothing makes no ETag stale: a save with If-Match beside it goes through', async () => {
    const site = await createTestSite(service.app, account, { settings: { difficulty: 16 } })
    const etag = (await read(site.id)).headers.etag as string
    const [noOps, save] = await Promise.all([
      Promise.all(Array.from({ length: 4 }, () => update(site.id, { settings: { difficulty: 16 } }))),
      update(site.id, { name: 'Saved' }, etag),
    ])
    expect(save.statusCode, save.body).toBe(200)
    expect(noOps.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200])
    // One after the other, too: the no-op first, then the save with the ETag read before it.
    const current = (await read(site.id)).headers.etag as string
    expect((await update(site.id, { settings: { difficulty: 16 } }, current)).headers.etag).toBe(current)
    const later = await update(site.id, { name: 'Saved again' }, current)
    expect(later.statusCode).toBe(200)
    expect((await read(site.id)).json().name).toBe('Saved again')
  })

  it.skipIf(!available)('answers 404, whatever If-Match says, for a site that is not there', async () => {
    const response = await update(randomUUID(), { name: 'Gone' }, '"1"')
    expect(response.statusCode).toBe(404)
  })
})

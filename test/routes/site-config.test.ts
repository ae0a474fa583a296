import { randomUUID } from 'node:crypto'
import { Ajv } from 'ajv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { shareSite } from '../helpers/site-sharing.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

type Schema = Record<string, unknown>
interface Operation {
  requestBody?: { content: Record<string, { schema: Schema }> }
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>
}

const webhookSecret = 'whsec-config-0123456789abcdef'

/** Every setting but the webhook's and the countries (stored uppercase), away from its default. */
const tuned = {
  webhookEvents: ['verification.blocked', 'surge.started'],
  difficulty: 21,
  challengeLifetimeSeconds: 300,
  challengeThreshold: 30,
  blockThreshold: 80,
  maxStepUps: 3,
  surgeChallengesPerMinute: 600,
  blockedHelpUrl: 'https://shop.example/contact?topic=blocked',
  tokenAddressCheck: 'refuse',
  allowedAddresses: ['203.0.113.7', '2001:db8::/48'],
  blockedAddresses: ['198.51.100.0/24'],
}

/** Two instances, as a staging and a production server: a site moves between them through its configuration. */
describe('GET /api/v1/sites/{id}/config', () => {
  let staging: TestApp
  let production: TestApp
  let stagingAccount: TestAccount
  let productionAccount: TestAccount
  beforeAll(async () => {
    ;[staging, production] = await Promise.all([buildTestApp(), buildTestApp()])
    ;[stagingAccount, productionAccount] = await Promise.all([createTestAccount(staging.app), createTestAccount(production.app)])
  })
  afterAll(async () => {
    await Promise.all([staging.close(), production.close()])
  })

  const configOf = (service: TestApp, account: TestAccount, id: string) =>
    service.app.inject({ method: 'GET', url: `/api/v1/sites/${id}/config`, headers: asScript(account) })

  it('answers the body that creates the same site on another instance, with keys of its own and without the webhook', async () => {
    const site = await createTestSite(staging.app, stagingAccount, {
      name: 'Shop (staging)',
      domains: ['shop.example', 'staging.shop.example'],
      settings: { webhookUrl: 'https://hooks.example.com/tollgate', webhookSecret, ...tuned, blockedCountries: ['kp', 'RU'] },
    })
    const exported = await configOf(staging, stagingAccount, site.id)
    expect(exported.statusCode, exported.body).toBe(200)
    expect(exported.body).not.toContain(webhookSecret)
    expect(exported.body).not.toContain(site.siteKey)
    expect(exported.body).not.toContain(site.secretKey)
    expect(exported.body).not.toContain(site.id)
    expect(exported.json()).toEqual({
      name: 'Shop (staging)',
      domains: ['shop.example', 'staging.shop.example'],
      settings: { ...tuned, blockedCountries: ['KP', 'RU'], requireTwoFactor: false },
    })

    // `curl .../config | curl -X POST .../sites -d @-`, on the other instance.
    const created = await production.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { ...asScript(productionAccount), 'content-type': 'application/json' },
      payload: exported.body,
    })
    expect(created.statusCode, created.body).toBe(201)
    const moved = created.json<typeof site>()
    expect(moved.siteKey).not.toBe(site.siteKey)
    expect(moved.secretKey).not.toBe(site.secretKey)
    const original = (await staging.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}`, headers: asScript(stagingAccount) })).json<typeof site>()
    // The same settings but the webhook's, which is set again with its secret.
    expect(moved.name).toBe(original.name)
    expect(moved.domains).toEqual(original.domains)
    expect(moved.settings).toEqual({ ...original.settings, webhookUrl: null, webhookUrlSet: false, webhookSecretSet: false })
    expect((await configOf(production, productionAccount, moved.id)).json()).toEqual(exported.json())
  })

  it('exports the defaults of a site created with none, and creates the same site from them', async () => {
    const site = await createTestSite(staging.app, stagingAccount, { name: 'Plain' })
    const exported = await configOf(staging, stagingAccount, site.id)
    const created = await production.app.inject({ method: 'POST', url: '/api/v1/sites', headers: asScript(productionAccount), payload: exported.json() })
    expect(created.statusCode, created.body).toBe(201)
    expect(created.json().settings).toEqual(site.settings)
  })

  it('is answered to any member who can read the site, a viewer too, and 404 to others', async () => {
    const site = await createTestSite(staging.app, stagingAccount, { settings: { webhookUrl: 'https://hooks.example.com/v', webhookSecret } })
    const viewer = await createTestAccount(staging.app)
    const stranger = await createTestAccount(staging.app)
    expect((await configOf(staging, viewer, site.id)).statusCode).toBe(404)
    await shareSite(staging.app, stagingAccount, viewer, site.id, 'viewer')
    const asViewer = await configOf(staging, viewer, site.id)
    expect(asViewer.statusCode).toBe(200)
    expect(asViewer.json()).toEqual((await configOf(staging, stagingAccount, site.id)).json())
    expect(asViewer.body).not.toContain('hooks.example.com')
    expect((await configOf(staging, stranger, site.id)).statusCode).toBe(404)
    expect((await configOf(staging, stagingAccount, randomUUID())).statusCode).toBe(404)
  })

  it("documents the answer with the create body's schema, which the answer meets", async () => {
    const { paths } = (await staging.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, Record<string, Operation>> }>()
    const answer = paths['/api/v1/sites/{id}/config']?.get?.responses['200']?.content?.['application/json']?.schema
    const createBody = paths['/api/v1/sites']?.post?.requestBody?.content['application/json']?.schema
    expect(answer).toBeDefined()
    expect(answer).toEqual(createBody)
    const site = await createTestSite(staging.app, stagingAccount, { settings: { blockedCountries: ['DE'] } })
    const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true })
    const validate = ajv.compile(answer ?? {})
    const body = (await configOf(staging, stagingAccount, site.id)).json()
    expect(validate(body), ajv.errorsText(validate.errors)).toBe(true)
  })
})

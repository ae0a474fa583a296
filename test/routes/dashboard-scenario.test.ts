import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dashboardSiteRoutes } from '../helpers/auth-cases.js'
import { OWN_ORIGIN, randomEmail, sessionCookieOf } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

/**
 * Issue 4, "How it will be checked": a new user with nothing but the HTTP API. Every step is a
 * request; nothing reads the database or calls the app's internals.
 */
describe.each(deployments)('a new operator, through the HTTP API only, on $name', ({ available, options }) => {
  let service: TestApp
  beforeAll(async () => {
    if (available) service = await buildTestApp(options)
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Record<string, string> = {}, payload?: object) =>
    service.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })

  async function signUpAndLogIn(email: string): Promise<Record<string, string>> {
    const password = 'a long enough password'
    expect((await call('POST', '/api/v1/accounts', {}, { email, password })).statusCode).toBe(201)
    const logIn = await call('POST', '/api/v1/sessions', { origin: OWN_ORIGIN }, { email, password })
    expect(logIn.statusCode).toBe(200)
    return { cookie: sessionCookieOf(logIn.headers['set-cookie']), origin: OWN_ORIGIN }
  }

  it.skipIf(!available)('signs up, creates a site, fetches a challenge with its key, sets the webhook, reads it back; others get nothing', async () => {
    const browser = await signUpAndLogIn(randomEmail())
    expect((await call('GET', '/api/v1/me', browser)).statusCode).toBe(200)

    const created = await call('POST', '/api/v1/sites', browser, { name: 'My shop', domains: ['shop.example.com'] })
    expect(created.statusCode).toBe(201)
    const site = created.json<{ id: string; siteKey: string; secretKey: string }>()
    expect(site).toMatchObject({ name: 'My shop', domains: ['shop.example.com'], siteKey: expect.any(String), secretKey: expect.any(String) })

    const challenge = await call('POST', '/api/v1/challenge', { 'x-site-key': site.siteKey, origin: 'https://shop.example.com' })
    expect(challenge.statusCode).toBe(200)
    expect(challenge.json().challenge).toMatch(/^[0-9a-f]{64}$/)

    const webhookSecret = 'my-webhook-secret-0123456789'
    const updated = await call('PUT', `/api/v1/sites/${site.id}`, browser, {
      settings: { webhookUrl: 'https://shop.example.com/hooks/tollgate', webhookSecret },
    })
    expect(updated.statusCode).toBe(200)

    const readBack = await call('GET', `/api/v1/sites/${site.id}`, browser)
    expect(readBack.statusCode).toBe(200)
    expect(readBack.json()).toMatchObject({
      id: site.id,
      name: 'My shop',
      siteKey: site.siteKey,
      settings: { webhookUrl: 'https://shop.example.com/hooks/tollgate', webhookSecretSet: true },
    })
    expect(readBack.body).not.toContain(webhookSecret)
    expect(readBack.body).not.toContain(site.secretKey)
    expect(readBack.json()).not.toHaveProperty('secretKey')
    expect(readBack.json().settings).not.toHaveProperty('webhookSecret')

    // Every site route, with no credentials and as a second account.
    const stranger = await signUpAndLogIn(randomEmail())
    for (const route of dashboardSiteRoutes) {
      const url = route.path.replace('{id}', site.id)
      const anonymous = await call(route.method, url, {}, route.body)
      expect(anonymous.statusCode, `${route.method} ${route.path} without credentials`).toBe(401)
      const foreign = await call(route.method, url, stranger, route.body)
      expect(foreign.statusCode, `${route.method} ${route.path} as another account`).toBe(404)
    }
    for (const [method, url] of [['GET', '/api/v1/sites'], ['POST', '/api/v1/sites'], ['GET', '/api/v1/api-keys'], ['POST', '/api/v1/api-keys'], ['GET', '/api/v1/me'], ['DELETE', '/api/v1/sessions']] as const) {
      expect((await call(method, url, {}, method === 'POST' ? { name: 'x' } : undefined)).statusCode, `${method} ${url}`).toBe(401)
    }
    const strangersSites = await call('GET', '/api/v1/sites', stranger)
    expect(strangersSites.json()).toEqual({ items: [] })

    // The owner still has the site as they left it, and the public key still works.
    expect((await call('GET', `/api/v1/sites/${site.id}`, browser)).json()).toEqual(readBack.json())
    expect((await call('POST', '/api/v1/challenge', { 'x-site-key': site.siteKey, origin: 'https://shop.example.com' })).statusCode).toBe(200)
  })
})

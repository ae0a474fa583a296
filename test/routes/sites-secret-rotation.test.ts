import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PREVIOUS_SECRET_GRACE_MS } from '../../src/domain/sites/site-keys.js'
import { browserHeaders, obtainToken } from '../helpers/core-flow.js'
import { asBrowser, asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

interface Rotation {
  secretKey: string
  previousSecretExpiresAt: string | null
}

/**
 * Rotating a secret key without downtime, as Turnstile's rotation does: the replaced key keeps
 * working for two hours beside the new one unless the operator ends it (at the rotation or
 * later). Proven through Siteverify, as a site's backend would see it.
 */
describe('rotating the secret key with a grace period', () => {
  let service: TestApp
  let account: TestAccount
  beforeAll(async () => {
    service = await buildTestApp({ config: { rateLimitPerMinute: 0 } })
    account = await createTestAccount(service.app)
  })
  afterAll(() => service.close())

  const newSite = () => createTestSite(service.app, account, { settings: { difficulty: 4 } })
  const rotate = (site: CreatedSite, payload?: object) =>
    service.app.inject({
      method: 'POST',
      url: `/api/v1/sites/${site.id}/secret/rotate`,
      headers: asBrowser(account),
      ...(payload === undefined ? {} : { payload }),
    })
  const endPrevious = (site: CreatedSite, headers = asScript(account)) =>
    service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}/secret/previous`, headers })
  const readSite = async (site: CreatedSite) =>
    (await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}`, headers: asScript(account) })).json<{ previousSecretExpiresAt: string | null }>()
  /** Siteverify's error codes for a fresh token of the site redeemed with this secret ([] on success). */
  const redeemWith = async (site: CreatedSite, secret: string) => {
    const response = await obtainToken(service.app, browserHeaders(site.siteKey))
    const answer = await service.app.inject({ method: 'POST', url: '/siteverify', payload: { secret, response } })
    return answer.json<{ 'error-codes': string[] }>()['error-codes']
  }

  it('keeps the replaced key working for two hours beside the new one by default (a rotation without a body)', async () => {
    const site = await newSite()
    const before = Date.now()
    const response = await rotate(site)
    expect(response.statusCode).toBe(200)
    const rotation = response.json<Rotation>()
    const expiresAt = Date.parse(rotation.previousSecretExpiresAt ?? '')
    expect(expiresAt).toBeGreaterThanOrEqual(before + PREVIOUS_SECRET_GRACE_MS)
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + PREVIOUS_SECRET_GRACE_MS)
    expect(await redeemWith(site, site.secretKey)).toEqual([])
    expect(await redeemWith(site, rotation.secretKey)).toEqual([])
    expect((await readSite(site)).previousSecretExpiresAt).toBe(rotation.previousSecretExpiresAt)
  })

  it('says when the secret key was last rotated: null until the first rotation, then the time of the latest', async () => {
    const site = await newSite()
    const read = async () =>
      (await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}`, headers: asScript(account) })).json<{ secretRotatedAt: string | null }>()
    const listed = async () =>
      (await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asScript(account) }))
        .json<{ items: { id: string; secretRotatedAt: string | null }[] }>().items.find((each) => each.id === site.id)
    expect((site as unknown as { secretRotatedAt: unknown }).secretRotatedAt).toBeNull()
    expect((await read()).secretRotatedAt).toBeNull()
    const before = Date.now()
    expect((await rotate(site)).statusCode).toBe(200)
    const first = (await read()).secretRotatedAt
    expect(Date.parse(first ?? '')).toBeGreaterThanOrEqual(before - 1000)
    expect(Date.parse(first ?? '')).toBeLessThanOrEqual(Date.now() + 1000)
    expect((await listed())?.secretRotatedAt).toBe(first)
    // Other changes leave it; the next rotation moves it.
    expect((await service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(account), payload: { name: 'Renamed' } })).statusCode).toBe(200)
    expect((await endPrevious(site)).statusCode).toBe(204)
    expect((await read()).secretRotatedAt).toBe(first)
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect((await rotate(site, { invalidateImmediately: true })).statusCode).toBe(200)
    expect(Date.parse((await read()).secretRotatedAt ?? '')).toBeGreaterThan(Date.parse(first ?? ''))
  })

  it('ends the grace period on request: the replaced key is refused from then on, the new one still works', async () => {
    const site = await newSite()
    const { secretKey } = (await rotate(site, { invalidateImmediately: false })).json<Rotation>()
    expect(await redeemWith(site, site.secretKey)).toEqual([])
    expect((await endPrevious(site)).statusCode).toBe(204)
    expect(await redeemWith(site, site.secretKey)).toEqual(['invalid-input-secret'])
    expect(await redeemWith(site, secretKey)).toEqual([])
    expect((await readSite(site)).previousSecretExpiresAt).toBeNull()
    // Idempotent: nothing left to end is not an error.
    expect((await endPrevious(site)).statusCode).toBe(204)
  })

  it('stops the replaced key at once with invalidateImmediately (a leaked key)', async () => {
    const site = await newSite()
    const rotation = (await rotate(site, { invalidateImmediately: true })).json<Rotation>()
    expect(rotation.previousSecretExpiresAt).toBeNull()
    expect(await redeemWith(site, site.secretKey)).toEqual(['invalid-input-secret'])
    expect(await redeemWith(site, rotation.secretKey)).toEqual([])
  })

  it('rotating again within the grace period (the new key was lost) keeps the deployed key working, and the key it replaced', async () => {
    const site = await newSite()
    const lost = (await rotate(site)).json<Rotation>()
    const second = (await rotate(site)).json<Rotation>()
    // The key still deployed on the backend, from before both rotations, keeps its grace period.
    expect(await redeemWith(site, site.secretKey)).toEqual([])
    expect(await redeemWith(site, lost.secretKey)).toEqual([])
    expect(await redeemWith(site, second.secretKey)).toEqual([])
    // The site shows when the last replaced key stops: the one the latest rotation replaced.
    expect((await readSite(site)).previousSecretExpiresAt).toBe(second.previousSecretExpiresAt)

    // Ending the grace period ends it for both replaced keys.
    expect((await endPrevious(site)).statusCode).toBe(204)
    expect(await redeemWith(site, site.secretKey)).toEqual(['invalid-input-secret'])
    expect(await redeemWith(site, lost.secretKey)).toEqual(['invalid-input-secret'])
    expect(await redeemWith(site, second.secretKey)).toEqual([])
  })

  it('keeps two replaced keys at most: a third rotation within the grace period stops the oldest', async () => {
    const site = await newSite()
    const first = (await rotate(site)).json<Rotation>()
    const second = (await rotate(site)).json<Rotation>()
    const third = (await rotate(site)).json<Rotation>()
    expect(await redeemWith(site, site.secretKey)).toEqual(['invalid-input-secret'])
    for (const kept of [first, second, third]) expect(await redeemWith(site, kept.secretKey)).toEqual([])
  })

  it('a leaked-key rotation after another stops every replaced key', async () => {
    const site = await newSite()
    const first = (await rotate(site)).json<Rotation>()
    const leaked = (await rotate(site, { invalidateImmediately: true })).json<Rotation>()
    expect(await redeemWith(site, site.secretKey)).toEqual(['invalid-input-secret'])
    expect(await redeemWith(site, first.secretKey)).toEqual(['invalid-input-secret'])
    expect(await redeemWith(site, leaked.secretKey)).toEqual([])
    expect((await readSite(site)).previousSecretExpiresAt).toBeNull()
  })

  it('refuses the replaced key once its grace period is over', async () => {
    const site = await newSite()
    // A rotation two hours ago, as the repository would have stored it then.
    const newKey = await service.app.sites.rotateSecret(site.id, new Date(Date.now() - 1))
    await service.app.siteCache.invalidate(site)
    expect(await redeemWith(site, site.secretKey)).toEqual(['invalid-input-secret'])
    expect(await redeemWith(site, newKey ?? '')).toEqual([])
    expect((await readSite(site)).previousSecretExpiresAt).toBeNull()
  })

  it.each([
    ['a non-boolean invalidateImmediately', { invalidateImmediately: 'sometimes' }],
    ['an unknown field', { keepFor: 3600 }],
    ['an array', [true]],
  ])('answers 400 validation_error to %s and leaves the key unchanged', async (_case, payload) => {
    const site = await newSite()
    const response = await rotate(site, payload)
    expect(response.statusCode).toBe(400)
    expect(response.json().error.code).toBe('validation_error')
    expect(await redeemWith(site, site.secretKey)).toEqual([])
    expect((await readSite(site)).previousSecretExpiresAt).toBeNull()
  })
})

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { credentialRateLimits } from '../../src/routes/v1/accounts/rate-limits.js'
import { changeWhileDeletingAccount } from '../helpers/account-row-race.js'
import { browserHeaders, obtainToken } from '../helpers/core-flow.js'
import { asBrowser, asScript, createTestAccount, createTestSite, randomClientAddress, type TestAccount } from '../helpers/dashboard-client.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { hasPostgres } from '../helpers/services.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'

describe.each(deployments)('DELETE /api/v1/me on $name', ({ available, options }) => {
  let service: TestApp
  beforeAll(async () => {
    if (available) service = await buildTestApp(options)
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  const deleteAccount = (headers: Record<string, string>, payload: object) => service.app.inject({ method: 'DELETE', url: '/api/v1/me', headers, payload })
  const logIn = async (account: TestAccount) =>
    (await service.app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: account.email, password: account.password }, remoteAddress: randomClientAddress() })).statusCode
  const me = async (headers: Record<string, string>) => (await service.app.inject({ method: 'GET', url: '/api/v1/me', headers })).statusCode
  const siteverify = async (secret: string, response: string) =>
    (await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret, response } })).json<{ success: boolean; 'error-codes': string[] }>()
  const challengeStatus = async (siteKey: string) =>
    (await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(siteKey) })).statusCode

  it.skipIf(!available)('deletes the account and everything of it: log-ins, sessions, API keys, site keys, secret keys, stats and logs; another account keeps its own', { timeout: 30_000 }, async () => {
    const account = await createTestAccount(service.app)
    const other = await createTestAccount(service.app)
    const site = await createTestSite(service.app, account)
    const secondSite = await createTestSite(service.app, account)
    const othersSite = await createTestSite(service.app, other)
    const token = await obtainToken(service.app, browserHeaders(site.siteKey))
    await insertVerifications(service.app.database, [
      { siteId: site.id, createdAt: new Date(), action: 'allow' },
      { siteId: secondSite.id, createdAt: new Date(), action: 'block' },
      { siteId: othersSite.id, createdAt: new Date(), action: 'allow' },
    ])

    const response = await deleteAccount(asBrowser(account), { password: account.password })
    expect(response.statusCode).toBe(204)
    // The browser forgets the session cookie.
    expect(String(response.headers['set-cookie'])).toMatch(/tollgate_session=;.*Expires=Thu, 01 Jan 1970/)

    expect(await logIn(account)).toBe(401)
    expect(await me(asBrowser(account))).toBe(401)
    expect(await me(asScript(account))).toBe(401)
    expect(await challengeStatus(site.siteKey)).toBe(401)
    expect(await challengeStatus(secondSite.siteKey)).toBe(401)
    // The token names a site that is no more.
    expect(await siteverify(site.secretKey, token)).toMatchObject({ success: false, 'error-codes': ['invalid-input-response'] })
    const rows = async (table: string, siteIds: string[]) =>
      (await service.app.database.query<{ count: number }>(`SELECT count(*)::int8 AS count FROM ${table} WHERE site_id = ANY($1::uuid[])`, [siteIds]))[0]?.count
    // The verification above was still in the log's buffer: written after the deletion, it goes
    // too, with the counts its writing added to the stats, within seconds rather than the hour.
    await service.app.verificationLog.flush()
    await vi.waitFor(async () => {
      expect(await rows('verifications', [site.id, secondSite.id])).toBe(0)
      expect(await rows('verification_rollups', [site.id, secondSite.id])).toBe(0)
    }, { timeout: 15_000, interval: 250 })

    // The other account is untouched.
    expect(await me(asBrowser(other))).toBe(200)
    expect(await challengeStatus(othersSite.siteKey)).toBe(200)
    expect(await rows('verifications', [othersSite.id])).toBe(1)
    expect(await rows('verification_rollups', [othersSite.id])).toBeGreaterThan(0)
    // The address can sign up again, as a new account.
    const again = await service.app.inject({ method: 'POST', url: '/api/v1/accounts', payload: { email: account.email, password: 'a brand new password' }, remoteAddress: randomClientAddress() })
    expect(again.statusCode).toBe(201)
    expect(again.json<{ id: string }>().id).not.toBe(account.id)
  })

  it.skipIf(!available)('refuses a wrong password (400 on password) and keeps everything', async () => {
    const account = await createTestAccount(service.app)
    const site = await createTestSite(service.app, account)
    const response = await deleteAccount(asBrowser(account), { password: 'not the password' })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({ code: 'validation_error', details: [{ field: 'password', message: 'is not your current password' }] })
    expect(response.headers['set-cookie']).toBeUndefined()
    expect(await logIn(account)).toBe(200)
    expect(await me(asScript(account))).toBe(200)
    expect(await challengeStatus(site.siteKey)).toBe(200)
    // Without a password at all: the schema's error, and still nothing deleted.
    const bare = await deleteAccount(asBrowser(account), {})
    expect(bare.statusCode).toBe(400)
    expect(bare.json().error.details).toEqual([expect.objectContaining({ field: 'password' })])
    expect(await logIn(account)).toBe(200)
  })

  it.skipIf(!available)('is refused with an API key (403), from another origin (403 csrf_rejected) and without credentials (401)', async () => {
    const account = await createTestAccount(service.app)
    const payload = { password: account.password }
    const byScript = await deleteAccount(asScript(account), payload)
    expect(byScript.statusCode).toBe(403)
    expect(byScript.json().error.code).toBe('forbidden')
    const crossSite = await deleteAccount({ cookie: account.cookie, origin: 'https://evil.example' }, payload)
    expect(crossSite.statusCode).toBe(403)
    expect(crossSite.json().error.code).toBe('csrf_rejected')
    expect((await deleteAccount({}, payload)).statusCode).toBe(401)
    expect(await logIn(account)).toBe(200)
  })

  it.skipIf(!available)('counts wrong passwords with the password change\'s: 429 after 10 in 10 minutes, even with the right one then', async () => {
    await startWithinOneWindow(credentialRateLimits.logInPerEmailAndIp.windowMs)
    const account = await createTestAccount(service.app)
    for (let attempt = 0; attempt < 5; attempt++) {
      expect((await deleteAccount(asBrowser(account), { password: `guess ${attempt}` })).statusCode).toBe(400)
      const change = await service.app.inject({
        method: 'PUT', url: '/api/v1/me/password', headers: asBrowser(account), payload: { currentPassword: `guess ${attempt}`, newPassword: 'a new passphrase' },
      })
      expect(change.statusCode).toBe(400)
    }
    const refused = await deleteAccount(asBrowser(account), { password: account.password })
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.code).toBe('rate_limited')
    expect(await logIn(account)).toBe(200)
  })
})

describe.skipIf(!hasPostgres)('creation racing an account deletion on PostgreSQL', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp({ database: 'postgres' })
  })
  afterAll(async () => {
    await service?.close()
  })

  it('answers 401 (the account is gone), not a 500 from the foreign key, for a site and for an API key', async () => {
    const forSite = await createTestAccount(service.app)
    const site = await changeWhileDeletingAccount(service.app, forSite.id, () => service.app.inject({ method: 'POST', url: '/api/v1/sites', headers: asScript(forSite), payload: { name: 'Late' } }))
    expect(site.statusCode).toBe(401)
    expect(site.json().error).toMatchObject({ code: 'unauthorized', message: 'The account was deleted.' })

    const forKey = await createTestAccount(service.app)
    // A key's creation waits where it takes the second factor, its password checked before.
    const key = await changeWhileDeletingAccount(
      service.app,
      forKey.id,
      () => service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: asBrowser(forKey), payload: { name: 'Late', password: forKey.password } }),
      '%FROM accounts WHERE id = $1 FOR NO KEY UPDATE%',
    )
    expect(key.statusCode).toBe(401)
    expect(key.json().error).toMatchObject({ code: 'unauthorized', message: 'The account was deleted.' })

    const rows = await service.app.database.query<{ count: number }>(
      'SELECT (SELECT count(*) FROM sites WHERE account_id = ANY($1::uuid[])) + (SELECT count(*) FROM api_keys WHERE account_id = ANY($1::uuid[]))::int4 AS count',
      [[forSite.id, forKey.id]],
    )
    expect(Number(rows[0]?.count)).toBe(0)
  })
})

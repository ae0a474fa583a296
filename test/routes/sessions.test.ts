import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  asBrowser,
  asScript,
  createTestAccount,
  OWN_ORIGIN,
  randomClientAddress,
  randomEmail,
  sessionCookieOf,
  type TestAccount,
} from '../helpers/dashboard-client.js'
import { hasPostgres } from '../helpers/services.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { credentialRateLimits } from '../../src/routes/v1/accounts/rate-limits.js'

describe('sessions: log in, GET /api/v1/me, log out', () => {
  let service: TestApp
  let account: TestAccount
  beforeAll(async () => {
    service = await buildTestApp()
    account = await createTestAccount(service.app)
  })
  afterAll(() => service.close())

  const logIn = (payload: object, options: { remoteAddress?: string; headers?: Record<string, string> } = {}) =>
    service.app.inject({
      method: 'POST',
      url: '/api/v1/sessions',
      payload,
      remoteAddress: options.remoteAddress ?? randomClientAddress(),
      headers: options.headers,
    })
  const me = (headers: Record<string, string>) => service.app.inject({ method: 'GET', url: '/api/v1/me', headers })

  it('takes the session cookie beside another scheme\'s Authorization header (a Basic-auth proxy in front of the dashboard)', async () => {
    const proxied = { ...asBrowser(account), authorization: 'Basic b3BzOnNlY3JldA==' }
    const read = await me(proxied)
    expect(read.statusCode, read.body).toBe(200)
    expect(read.json().email).toBe(account.email)
    const created = await service.app.inject({ method: 'POST', url: '/api/v1/sites', headers: proxied, payload: { name: 'Behind a proxy' } })
    expect(created.statusCode, created.body).toBe(201)
    // Without the cookie, the answer says what is missing.
    const refused = await me({ authorization: 'Basic b3BzOnNlY3JldA==' })
    expect(refused.statusCode).toBe(401)
    expect(refused.json().error).toMatchObject({ code: 'unauthorized', message: expect.stringContaining('Bearer <API key>') })
    // A Bearer header is still judged alone, whatever cookie comes with it.
    expect((await me({ ...asBrowser(account), authorization: 'Bearer not-a-key' })).statusCode).toBe(401)
    // A key of the wrong shape (a site's secret key, say) is an unknown key, not a malformed header.
    const secretKeySent = await me({ authorization: 'Bearer tgs_Dtskk8QBUxn7KdLVfedjjKVRCAqmDDBda5Ug9tB7Ye0' })
    expect(secretKeySent.json().error).toMatchObject({ code: 'unauthorized', message: expect.stringContaining("a site's secret key is for Siteverify only") })
  })

  it('logs in: 200 with the account and an HttpOnly, SameSite=Lax session cookie for the whole service', async () => {
    const response = await logIn({ email: account.email, password: account.password })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ id: account.id, email: account.email, createdAt: expect.any(String) })
    const setCookie = String(response.headers['set-cookie'])
    expect(setCookie).toMatch(/^tollgate_session=[A-Za-z0-9_-]{43};/)
    expect(setCookie).toMatch(/; HttpOnly/)
    expect(setCookie).toMatch(/; SameSite=Lax/)
    expect(setCookie).toMatch(/; Path=\//)
    expect(setCookie).not.toMatch(/; Secure/)
  })

  it('accepts the e-mail address in any letter case', async () => {
    const response = await logIn({ email: account.email.toUpperCase(), password: account.password })
    expect(response.statusCode).toBe(200)
  })

  it('keeps only the SHA-256 of the session token in the database', async () => {
    const response = await logIn({ email: account.email, password: account.password })
    const token = sessionCookieOf(response.headers['set-cookie']).split('=')[1] ?? ''
    const rows = await service.app.database.query<{ token_hash: string }>('SELECT token_hash FROM sessions WHERE account_id = $1', [account.id])
    expect(rows.map((row) => row.token_hash)).toContain(createHash('sha256').update(token).digest('hex'))
    expect(rows.map((row) => row.token_hash)).not.toContain(token)
  })

  it('answers a wrong password and an unknown address alike: 401 invalid_credentials', async () => {
    const wrong = await logIn({ email: account.email, password: 'wrong password!' })
    const unknown = await logIn({ email: randomEmail(), password: 'wrong password!' })
    for (const response of [wrong, unknown]) {
      expect(response.statusCode).toBe(401)
      expect(response.headers['set-cookie']).toBeUndefined()
    }
    const { requestId: _first, ...wrongError } = wrong.json().error
    const { requestId: _second, ...unknownError } = unknown.json().error
    expect(wrongError).toEqual(unknownError)
    expect(wrongError.code).toBe('invalid_credentials')
  })

  it('spends as long on an unknown address as on a wrong password (Argon2 against a dummy hash)', async () => {
    const timed = async (email: string) => {
      const started = performance.now()
      await logIn({ email, password: 'wrong password!' })
      return performance.now() - started
    }
    const other = await createTestAccount(service.app)
    // Interleaved, so that both kinds of attempt see the same load from the tests around.
    const wrongPasswords: number[] = []
    const unknownAddresses: number[] = []
    for (let attempt = 0; attempt < 7; attempt++) {
      wrongPasswords.push(await timed(other.email))
      unknownAddresses.push(await timed(randomEmail()))
    }
    const median = (durations: number[]) => durations.sort((a, b) => a - b)[3] ?? 0
    const wrongPassword = median(wrongPasswords)
    const unknownAddress = median(unknownAddresses)
    // Without the dummy verification an unknown address answers in about a millisecond, a
    // wrong password in tens (a ratio near 0.03); the bounds are loose because other tests share
    // the CPU (under a loaded CI run the ratio of the two medians fell to 0.37).
    expect(wrongPassword).toBeGreaterThan(5)
    expect(unknownAddress).toBeGreaterThan(wrongPassword * 0.2)
  })

  it('GET /api/v1/me answers the account by session cookie and by API key, 401 without', async () => {
    for (const headers of [{ cookie: account.cookie }, asScript(account)]) {
      const response = await me(headers)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ id: account.id, email: account.email, createdAt: expect.any(String) })
    }
    const anonymous = await me({})
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
  })

  it('GET /api/v1/sessions/current answers the session\'s account, and 200 {account: null} to a browser without a live session', async () => {
    const current = (headers: Record<string, string>) => service.app.inject({ method: 'GET', url: '/api/v1/sessions/current', headers })
    const loggedIn = await current({ cookie: account.cookie })
    expect(loggedIn.statusCode).toBe(200)
    expect(loggedIn.json()).toEqual({ account: { id: account.id, email: account.email, createdAt: expect.any(String) } })
    // Logged out, a stranger's cookie, no cookie (a Basic-auth proxy's header beside it or not): not logged in, said with a 200.
    const leaving = await createTestAccount(service.app)
    expect((await service.app.inject({ method: 'DELETE', url: '/api/v1/sessions', headers: asBrowser(leaving) })).statusCode).toBe(204)
    const withoutSession: Record<string, string>[] = [{ cookie: leaving.cookie }, { cookie: 'tollgate_session=not-a-session' }, {}, { authorization: 'Basic b3BzOnNlY3JldA==' }]
    for (const headers of withoutSession) {
      const anonymous = await current(headers)
      expect(anonymous.statusCode, JSON.stringify(headers)).toBe(200)
      expect(anonymous.json()).toEqual({ account: null })
    }
    // GET /api/v1/me still answers 401 then, for the clients that ask it.
    expect((await me({ cookie: leaving.cookie })).statusCode).toBe(401)
    // An API key is no session, as everywhere a session only is asked for; an unknown one is refused.
    const byScript = await current(asScript(account))
    expect(byScript.statusCode).toBe(403)
    expect(byScript.json().error.code).toBe('forbidden')
    expect((await current({ cookie: account.cookie, authorization: `Bearer tgak_${'B'.repeat(43)}` })).statusCode).toBe(401)
  })

  it('judges a request that names an API key by the key alone, not by its cookie', async () => {
    const response = await me({ cookie: account.cookie, authorization: `Bearer tgak_${'B'.repeat(43)}` })
    expect(response.statusCode).toBe(401)
  })

  it('logs out: 204, the cookie is cleared and the session stops working at once; other sessions live on', async () => {
    const first = await createTestAccount(service.app)
    const second = sessionCookieOf((await logIn({ email: first.email, password: first.password })).headers['set-cookie'])
    const response = await service.app.inject({ method: 'DELETE', url: '/api/v1/sessions', headers: asBrowser(first) })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect(String(response.headers['set-cookie'])).toMatch(/^tollgate_session=;.*(Max-Age=0|Expires=Thu, 01 Jan 1970)/)
    expect((await me({ cookie: first.cookie })).statusCode).toBe(401)
    expect((await me({ cookie: second })).statusCode).toBe(200)
  })

  it('answers a log-out with an API key 403 forbidden, as every operation of a session only, and the key keeps working', async () => {
    const owner = await createTestAccount(service.app)
    const response = await service.app.inject({ method: 'DELETE', url: '/api/v1/sessions', headers: asScript(owner) })
    expect(response.statusCode).toBe(403)
    expect(response.json().error).toMatchObject({ code: 'forbidden', message: 'Only a logged-in session (the dashboard) may log out, not an API key.' })
    expect((await me(asScript(owner))).statusCode).toBe(200)
  })

  it('logs out everywhere else: the other sessions end at once, this one, the API keys and other accounts\' sessions stay', async () => {
    const first = await createTestAccount(service.app)
    const laptop = sessionCookieOf((await logIn({ email: first.email, password: first.password })).headers['set-cookie'])
    const phone = sessionCookieOf((await logIn({ email: first.email, password: first.password })).headers['set-cookie'])
    const stranger = await createTestAccount(service.app)
    const response = await service.app.inject({ method: 'DELETE', url: '/api/v1/sessions/others', headers: asBrowser(first) })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ endedSessions: 2 })
    expect((await me({ cookie: laptop })).statusCode).toBe(401)
    expect((await me({ cookie: phone })).statusCode).toBe(401)
    expect((await me(asBrowser(first))).statusCode).toBe(200)
    expect((await me(asScript(first))).statusCode).toBe(200)
    expect((await me(asBrowser(stranger))).statusCode).toBe(200)
    // Not with an API key (a leaked key must not log the owner out), nor from another origin.
    const byScript = await service.app.inject({ method: 'DELETE', url: '/api/v1/sessions/others', headers: asScript(first) })
    expect(byScript.statusCode).toBe(403)
    const crossSite = await service.app.inject({ method: 'DELETE', url: '/api/v1/sessions/others', headers: { cookie: first.cookie, origin: 'https://evil.example' } })
    expect(crossSite.json().error.code).toBe('csrf_rejected')
  })

  it('lists the account\'s sessions with the browser and address each logged in from, and ends one of them', async () => {
    const owner = await createTestAccount(service.app)
    const phoneUserAgent = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1'
    const phone = sessionCookieOf((await logIn({ email: owner.email, password: owner.password }, { remoteAddress: '203.0.113.45', headers: { 'user-agent': phoneUserAgent } })).headers['set-cookie'])
    const stranger = await createTestAccount(service.app)
    const list = async (headers: Record<string, string>) => service.app.inject({ method: 'GET', url: '/api/v1/sessions', headers })

    const listed = await list(asBrowser(owner))
    expect(listed.statusCode).toBe(200)
    const items = listed.json<{ items: { id: string; current: boolean; userAgent: string | null; clientIp: string | null; lastSeenAt: string | null; createdAt: string; expiresAt: string }[] }>().items
    expect(items).toHaveLength(2)
    const [thisOne, other] = [items.find((item) => item.current), items.find((item) => !item.current)]
    expect(other).toMatchObject({ userAgent: phoneUserAgent, clientIp: '203.0.113.45', lastSeenAt: expect.any(String) })
    expect(thisOne).toMatchObject({ current: true, lastSeenAt: expect.any(String) })
    // The cookie's lifetime (the two times come from the service's clock and the database's).
    expect(Math.abs(Date.parse(other!.expiresAt) - Date.parse(other!.createdAt) - 14 * 86_400_000)).toBeLessThan(2_000)
    // Another account's sessions are neither listed nor endable.
    const strangers = (await list(asBrowser(stranger))).json<{ items: { id: string }[] }>().items
    expect(strangers.map((item) => item.id)).not.toContain(other!.id)
    const foreign = await service.app.inject({ method: 'DELETE', url: `/api/v1/sessions/${other!.id}`, headers: asBrowser(stranger) })
    expect(foreign.statusCode).toBe(404)
    expect(foreign.json().error.code).toBe('not_found')
    expect((await me({ cookie: phone })).statusCode).toBe(200)
    expect((await service.app.inject({ method: 'DELETE', url: '/api/v1/sessions/not-an-id', headers: asBrowser(owner) })).statusCode).toBe(404)

    // Not with an API key: a leaked key must not read the owner's addresses or log the owner out.
    expect((await list(asScript(owner))).statusCode).toBe(403)
    expect((await service.app.inject({ method: 'DELETE', url: `/api/v1/sessions/${other!.id}`, headers: asScript(owner) })).statusCode).toBe(403)

    const ended = await service.app.inject({ method: 'DELETE', url: `/api/v1/sessions/${other!.id}`, headers: asBrowser(owner) })
    expect(ended.statusCode).toBe(204)
    expect(ended.headers['set-cookie']).toBeUndefined()
    expect((await me({ cookie: phone })).statusCode).toBe(401)
    expect((await me(asBrowser(owner))).statusCode).toBe(200)
    expect((await list(asBrowser(owner))).json<{ items: unknown[] }>().items).toHaveLength(1)

    // Ending the current session logs this browser out, as DELETE /sessions does.
    const own = await service.app.inject({ method: 'DELETE', url: `/api/v1/sessions/${thisOne!.id}`, headers: asBrowser(owner) })
    expect(own.statusCode).toBe(204)
    expect(String(own.headers['set-cookie'])).toMatch(/tollgate_session=;/)
    expect((await me(asBrowser(owner))).statusCode).toBe(401)
  })

  it('refuses a log-out without our Origin (403 csrf_rejected) and the session stays valid', async () => {
    const other = await createTestAccount(service.app)
    for (const headers of [{ cookie: other.cookie }, { cookie: other.cookie, origin: 'https://evil.example' }]) {
      const response = await service.app.inject({ method: 'DELETE', url: '/api/v1/sessions', headers })
      expect(response.statusCode).toBe(403)
      expect(response.json().error.code).toBe('csrf_rejected')
    }
    expect((await me({ cookie: other.cookie })).statusCode).toBe(200)
  })

  it('accepts a Referer of our own origin when the browser sends no Origin', async () => {
    const other = await createTestAccount(service.app)
    const response = await service.app.inject({
      method: 'DELETE',
      url: '/api/v1/sessions',
      headers: { cookie: other.cookie, referer: `${OWN_ORIGIN}/dashboard/sites` },
    })
    expect(response.statusCode).toBe(204)
  })

  it('names in a csrf_rejected the Origin the request needed, and takes the Host in any letter case', async () => {
    const other = await createTestAccount(service.app)
    const createKey = (headers: Record<string, string>) =>
      service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { cookie: other.cookie, ...headers }, payload: { name: 'x', password: other.password } })
    const needs = (origin: string) =>
      `The request did not come from this service's own pages: a script that logs in with a session cookie must send "Origin: ${origin}" (the scheme, host and port it calls).`
    // A script that calls 127.0.0.1 but names localhost, or adds a trailing slash, or sends none.
    for (const [headers, origin] of [
      [{ host: '127.0.0.1:3000', origin: 'http://localhost:3000' }, 'http://127.0.0.1:3000'],
      [{ host: 'localhost:3000', origin: 'http://localhost:3000/' }, 'http://localhost:3000'],
      [{ host: 'localhost:3000' }, 'http://localhost:3000'],
    ] as const) {
      const refused = await createKey(headers)
      expect(refused.statusCode).toBe(403)
      expect(refused.json().error).toMatchObject({ code: 'csrf_rejected', message: needs(origin) })
    }
    // A log-in posted with a foreign Origin is told the same.
    const logInRefused = await logIn({ email: account.email, password: account.password }, { headers: { host: 'localhost:3000', origin: 'https://evil.example' } })
    expect(logInRefused.json().error).toMatchObject({ code: 'csrf_rejected', message: needs('http://localhost:3000') })
    // curl sends the Host as typed; a browser's Origin is always lower case, and they match.
    expect((await createKey({ host: 'LocalHost:3000', origin: 'http://localhost:3000' })).statusCode).toBe(201)
  })

  it('uses PUBLIC_URL as our origin when it is set', async () => {
    const behindProxy = await buildTestApp({ env: { PUBLIC_URL: 'https://tollgate.example.com' } })
    try {
      const other = await createTestAccount(behindProxy.app, { origin: 'https://tollgate.example.com' })
      const fromHost = await behindProxy.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: asBrowser(other), payload: { name: 'x', password: other.password } })
      expect(fromHost.statusCode).toBe(403)
      expect(fromHost.json().error.message).toContain('"Origin: https://tollgate.example.com"')
      const fromPublicUrl = await behindProxy.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: { cookie: other.cookie, origin: 'https://tollgate.example.com' },
        payload: { name: 'x', password: other.password },
      })
      expect(fromPublicUrl.statusCode).toBe(201)
    } finally {
      await behindProxy.close()
    }
  })

  it('does not accept an expired session', async () => {
    const other = await createTestAccount(service.app)
    await service.app.database.query("UPDATE sessions SET expires_at = now() - interval '1 second' WHERE account_id = $1", [other.id])
    expect((await me({ cookie: other.cookie })).statusCode).toBe(401)
  })

  it('refuses a log-in posted by a page of another origin (login CSRF)', async () => {
    const response = await logIn({ email: account.email, password: account.password }, { headers: { origin: 'https://evil.example' } })
    expect(response.statusCode).toBe(403)
    expect(response.headers['set-cookie']).toBeUndefined()
  })

  it('rate-limits log-ins per account from one client (429 rate_limited with Retry-After), without locking out the owner elsewhere', async () => {
    await startWithinOneWindow(credentialRateLimits.logInPerEmailAndIp.windowMs)
    const other = await createTestAccount(service.app)
    const guesser = randomClientAddress()
    for (let attempt = 0; attempt < 10; attempt++) await logIn({ email: other.email, password: 'wrong password!' }, { remoteAddress: guesser })
    const refused = await logIn({ email: other.email, password: other.password }, { remoteAddress: guesser })
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.code).toBe('rate_limited')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect(refused.headers['set-cookie']).toBeUndefined()
    // The owner, from their own address, still gets in.
    expect((await logIn({ email: other.email, password: other.password })).statusCode).toBe(200)
  })

  it('counts wrong passwords only: the owner logs in again and again from one address, and still confirms a change with the password there', { timeout: 60_000 }, async () => {
    await startWithinOneWindow(credentialRateLimits.logInPerEmailAndIp.windowMs, 30_000)
    const owner = await createTestAccount(service.app)
    const home = randomClientAddress()
    // More right log-ins than the account's budget from one client, and than the client's own.
    let session = ''
    for (let attempt = 0; attempt <= credentialRateLimits.logInPerIp.limit; attempt++) {
      const loggedIn = await logIn({ email: owner.email, password: owner.password }, { remoteAddress: home })
      expect(loggedIn.statusCode, `log-in ${attempt + 1}: ${loggedIn.body}`).toBe(200)
      session = sessionCookieOf(loggedIn.headers['set-cookie'])
    }
    // A change confirmed with the password counts against the same budgets: not spent by the log-ins.
    const changed = await service.app.inject({
      method: 'PUT', url: '/api/v1/me/password', remoteAddress: home,
      headers: { cookie: session, origin: OWN_ORIGIN }, payload: { currentPassword: owner.password, newPassword: 'a brand new passphrase' },
    })
    expect(changed.statusCode, changed.body).toBe(204)
    // Wrong passwords still spend the account's budget from that client, and the refusal names it.
    const newPassword = { email: owner.email, password: 'a brand new passphrase' }
    for (let attempt = 0; attempt < credentialRateLimits.logInPerEmailAndIp.limit; attempt++) {
      expect((await logIn({ email: owner.email, password: 'wrong password!' }, { remoteAddress: home })).statusCode).toBe(401)
    }
    const refused = await logIn(newPassword, { remoteAddress: home })
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(/^Too many log-in attempts for this account from this address; retry in \d+ seconds\.$/) })
    // An address without an account is told the same, so the message tells nothing of which exist.
    const stranger = randomClientAddress()
    const unknown = randomEmail()
    for (let attempt = 0; attempt < credentialRateLimits.logInPerEmailAndIp.limit; attempt++) await logIn({ email: unknown, password: 'wrong password!' }, { remoteAddress: stranger })
    const unknownRefused = await logIn({ email: unknown, password: 'wrong password!' }, { remoteAddress: stranger })
    expect(unknownRefused.json().error.message).toMatch(/^Too many log-in attempts for this account from this address; retry in \d+ seconds\.$/)
  })

  it('does not let one client that keeps guessing past its own budget lock the owner out', async () => {
    const other = await createTestAccount(service.app)
    const guesser = randomClientAddress()
    // Far beyond the account's budget from everywhere (100), all from one address: cheap refusals.
    const statuses: number[] = []
    for (let attempt = 0; attempt < 150; attempt++) {
      statuses.push((await logIn({ email: other.email, password: 'wrong password!' }, { remoteAddress: guesser })).statusCode)
    }
    expect(statuses.filter((status) => status === 401)).toHaveLength(10)
    expect(statuses.filter((status) => status === 429)).toHaveLength(140)
    expect((await logIn({ email: other.email, password: other.password })).statusCode).toBe(200)
  })

  it('rate-limits log-ins per account from everywhere at ten times the per-client budget', async () => {
    await startWithinOneWindow(credentialRateLimits.logInPerEmail.windowMs)
    const other = await createTestAccount(service.app)
    // createTestAccount's log-in, with the right password, was given back; 100 wrong ones from as many addresses spend the 100.
    for (let attempt = 0; attempt < 100; attempt++) await logIn({ email: other.email, password: 'wrong password!' })
    const refused = await logIn({ email: other.email, password: other.password })
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('Too many log-in attempts for this account from everywhere') })
  })

  it('spares a browser that has logged in to the account before: strangers spending the budget from everywhere do not lock its owner out', async () => {
    await startWithinOneWindow(credentialRateLimits.logInPerEmail.windowMs)
    const owner = await createTestAccount(service.app)
    const ownerAddress = randomClientAddress()
    const first = await logIn({ email: owner.email, password: owner.password }, { remoteAddress: ownerAddress })
    expect(first.statusCode).toBe(200)
    const cookies = [first.headers['set-cookie']].flat().map((cookie) => String(cookie).split(';')[0])
    const device = cookies.find((cookie) => cookie?.startsWith('tollgate_device='))
    expect(device).toMatch(/^tollgate_device=\d+\.[A-Za-z0-9_-]{43}$/)
    const session = sessionCookieOf(first.headers['set-cookie'])
    // 100 wrong guesses from as many addresses spend the budget from everywhere.
    for (let attempt = 0; attempt < 100; attempt++) await logIn({ email: owner.email, password: 'wrong password!' })
    expect((await logIn({ email: owner.email, password: owner.password })).statusCode).toBe(429)

    // The owner's browser logs in, and changes the password from its session.
    expect((await logIn({ email: owner.email, password: owner.password }, { remoteAddress: ownerAddress, headers: { cookie: device! } })).statusCode).toBe(200)
    const change = await service.app.inject({
      method: 'PUT', url: '/api/v1/me/password', remoteAddress: ownerAddress,
      headers: { cookie: `${session}; ${device}`, origin: OWN_ORIGIN }, payload: { currentPassword: owner.password, newPassword: 'a brand new passphrase' },
    })
    expect(change.statusCode).toBe(204)
    // A forged or another account's device cookie does not count.
    const forged = device!.replace(/\.[A-Za-z0-9_-]{43}$/, `.${'A'.repeat(43)}`)
    expect((await logIn({ email: owner.email, password: 'a brand new passphrase' }, { headers: { cookie: forged } })).statusCode).toBe(429)
  })

  it('rate-limits log-ins per IP address across accounts', async () => {
    await startWithinOneWindow(credentialRateLimits.logInPerIp.windowMs)
    const remoteAddress = randomClientAddress()
    for (let attempt = 0; attempt < 30; attempt++) await logIn({ email: randomEmail(), password: 'wrong password!' }, { remoteAddress })
    const refused = await logIn({ email: account.email, password: account.password }, { remoteAddress })
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.message).toMatch(/^Too many log-in attempts from this address; retry in \d+ seconds\.$/)
    expect((await logIn({ email: account.email, password: account.password })).statusCode).toBe(200)
  })
})

describe('sessions in production', () => {
  let service: TestApp
  let setCookie: string
  let password: string
  beforeAll(async () => {
    service = await buildTestApp({ env: { NODE_ENV: 'production' } })
    const account = await createTestAccount(service.app)
    password = account.password
    const response = await service.app.inject({
      method: 'POST',
      url: '/api/v1/sessions',
      payload: { email: account.email, password: account.password },
      remoteAddress: randomClientAddress(),
    })
    setCookie = String(response.headers['set-cookie'])
  })
  afterAll(() => service.close())

  it('names the cookie __Host-tollgate_session, so a cookie planted from a sibling subdomain is not taken for it', async () => {
    // What browsers require of a __Host- cookie: Secure, Path=/, no Domain.
    expect(setCookie).toMatch(/^__Host-tollgate_session=[A-Za-z0-9_-]{43};/)
    expect(setCookie).toMatch(/; Path=\//)
    expect(setCookie).not.toMatch(/Domain=/i)
    const token = sessionCookieOf(setCookie).split('=')[1] ?? ''
    const me = (cookie: string) => service.app.inject({ method: 'GET', url: '/api/v1/me', headers: { cookie } })
    expect((await me(`__Host-tollgate_session=${token}`)).statusCode).toBe(200)
    expect((await me(`tollgate_session=${token}`)).statusCode).toBe(401)
  })

  it('marks the session cookie Secure and SameSite=Lax', () => {
    expect(setCookie).toMatch(/; Secure/)
    expect(setCookie).toMatch(/; SameSite=Lax/)
  })

  it('tells browsers to keep to https (HSTS) on the dashboard API and pages, and keeps API answers out of caches', async () => {
    const keyCreated = await service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { cookie: sessionCookieOf(setCookie), origin: OWN_ORIGIN }, payload: { name: 'ci', password } })
    expect(keyCreated.statusCode).toBe(201)
    expect(keyCreated.headers['strict-transport-security']).toBe('max-age=31536000')
    expect(keyCreated.headers['cache-control']).toBe('no-store')
    const refused = await service.app.inject({ method: 'GET', url: '/api/v1/me' })
    expect(refused.statusCode).toBe(401)
    expect(refused.headers['strict-transport-security']).toBe('max-age=31536000')
    const page = await service.app.inject({ method: 'GET', url: '/dashboard/' })
    expect(page.headers['strict-transport-security']).toBe('max-age=31536000')
  })
})

describe('dashboard API answers outside production', () => {
  it('are not cached either, and carry no HSTS (plain http on a laptop)', async () => {
    const service = await buildTestApp()
    try {
      const response = await service.app.inject({ method: 'GET', url: '/api/v1/me' })
      expect(response.headers['cache-control']).toBe('no-store')
      expect(response.headers['strict-transport-security']).toBeUndefined()
    } finally {
      await service.close()
    }
  })
})

describe.skipIf(!hasPostgres)('log-in budgets on PostgreSQL, which folds more letters than JavaScript', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp({ database: 'postgres' })
  })
  afterAll(() => service.close())

  it('counts every spelling that reaches the account against its budgets ("İ" folds to "i" there)', async () => {
    await startWithinOneWindow(credentialRateLimits.logInPerEmailAndIp.windowMs)
    const folded = (await service.app.database.query<{ folded: string }>("SELECT lower('İ') AS folded"))[0]?.folded
    const account = await createTestAccount(service.app, { email: `carol.smith-${Date.now()}@example.com` })
    const variant = account.email.replace('smith', 'smİth')
    const remoteAddress = randomClientAddress()
    const logIn = (email: string, password: string) => service.app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email, password }, remoteAddress })
    if (folded !== 'i') {
      // A database that does not fold it: the spelling reaches no account at all.
      expect((await logIn(variant, account.password)).statusCode).toBe(401)
      return
    }
    // createTestAccount's log-in came from elsewhere; ten wrong guesses from this address spend its budget.
    for (let attempt = 0; attempt < 10; attempt++) expect((await logIn(account.email, 'wrong password!')).statusCode).toBe(401)
    expect((await logIn(account.email, 'wrong password!')).statusCode).toBe(429)
    expect((await logIn(variant, 'wrong password!')).statusCode).toBe(429)
  })
})

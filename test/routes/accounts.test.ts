import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, createTestAccount, OWN_ORIGIN, randomClientAddress, randomEmail } from '../helpers/dashboard-client.js'
import { hasPostgres } from '../helpers/services.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { credentialRateLimits } from '../../src/routes/v1/accounts/rate-limits.js'
import { currentSetupCode } from '../../src/routes/v1/accounts/announce-setup-code.js'

describe('POST /api/v1/accounts (sign-up)', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp()
  })
  afterAll(() => service.close())

  const signUp = (payload: object, options: { remoteAddress?: string; headers?: Record<string, string> } = {}) =>
    service.app.inject({
      method: 'POST',
      url: '/api/v1/accounts',
      payload,
      remoteAddress: options.remoteAddress ?? randomClientAddress(),
      headers: options.headers,
    })

  it('answers 201 with {id, email, createdAt} and stores an Argon2id hash, never the password', async () => {
    const email = randomEmail()
    const response = await signUp({ email, password: 'correct horse battery' })
    expect(response.statusCode).toBe(201)
    const account = response.json<{ id: string; email: string; createdAt: string }>()
    expect(account).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), email, createdAt: expect.any(String) })
    expect(Date.parse(account.createdAt)).toBeGreaterThan(Date.now() - 60_000)
    const [row] = await service.app.database.query<{ password_hash: string }>('SELECT password_hash FROM accounts WHERE id = $1', [account.id])
    expect(row?.password_hash).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/)
    expect(row?.password_hash).not.toContain('correct horse battery')
  })

  it('keeps e-mail addresses unique regardless of letter case: 409 email_taken', async () => {
    const email = randomEmail()
    expect((await signUp({ email, password: 'first password' })).statusCode).toBe(201)
    const again = await signUp({ email: email.toUpperCase(), password: 'second password' })
    expect(again.statusCode).toBe(409)
    expect(again.json().error.code).toBe('email_taken')
  })

  it('takes an address with an accent as one address, however the accent was typed', async () => {
    const local = `rene${Math.random().toString(36).slice(2, 10)}`
    const composed = `${local}\u00e9@example.com`
    const decomposed = `${local}e\u0301@example.com`
    expect((await signUp({ email: decomposed, password: 'first password' })).json().email).toBe(composed)
    expect((await signUp({ email: composed, password: 'second password' })).json().error.code).toBe('email_taken')
    const logIn = (email: string) =>
      service.app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email, password: 'first password' }, remoteAddress: randomClientAddress() })
    expect((await logIn(composed)).statusCode).toBe(200)
    expect((await logIn(decomposed)).statusCode).toBe(200)
  })

  it.each([
    [{ email: 'not-an-address', password: 'long enough password' }, 'email'],
    [{ email: 'a@b', password: 'long enough password' }, 'email'],
    [{ email: randomEmail(), password: 'short' }, 'password'],
    [{ email: randomEmail(), password: 'x'.repeat(257) }, 'password'],
    [{ email: randomEmail() }, 'password'],
    [{ password: 'long enough password' }, 'email'],
  ])('answers 400 validation_error naming the field for %j', async (payload, field) => {
    const response = await signUp(payload)
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({ code: 'validation_error', details: [expect.objectContaining({ field })] })
  })

  it('refuses a common password, one character repeated, and one containing the address or its local part (400 validation_error on password)', async () => {
    const email = `river-${randomEmail()}`
    const localPart = email.slice(0, email.indexOf('@'))
    for (const password of ['password123', 'aaaaaaaaaa', email, `${localPart}!2026`]) {
      const response = await signUp({ email, password })
      expect(response.statusCode, password).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'validation_error', details: [{ field: 'password', message: expect.stringMatching(/^(is too common|must not be one character repeated|must not contain your e-mail address)/) }] })
    }
    expect((await signUp({ email, password: 'correct horse battery staple' })).statusCode).toBe(201)
  })

  it('refuses a sign-up posted by a page of another origin (403 csrf_rejected) and allows our own', async () => {
    const foreign = await signUp({ email: randomEmail(), password: 'long enough password' }, { headers: { origin: 'https://evil.example' } })
    expect(foreign.statusCode).toBe(403)
    expect(foreign.json().error.code).toBe('csrf_rejected')
    const own = await signUp({ email: randomEmail(), password: 'long enough password' }, { headers: { origin: OWN_ORIGIN } })
    expect(own.statusCode).toBe(201)
  })

  it('rate-limits sign-ups per IP address: 429 rate_limited with Retry-After', async () => {
    await startWithinOneWindow(credentialRateLimits.signUpPerIp.windowMs)
    const remoteAddress = randomClientAddress()
    const statuses: number[] = []
    for (let attempt = 0; attempt < 21; attempt++) {
      statuses.push((await signUp({ email: randomEmail(), password: 'x' }, { remoteAddress })).statusCode)
    }
    expect(statuses.slice(0, 20).every((status) => status === 400)).toBe(true)
    const refused = await signUp({ email: randomEmail(), password: 'long enough password' }, { remoteAddress })
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.code).toBe('rate_limited')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect((await signUp({ email: randomEmail(), password: 'long enough password' })).statusCode).toBe(201)
  })

  it('counts an IPv6 /64 as one address, so rotating through it does not escape the limit', async () => {
    await startWithinOneWindow(credentialRateLimits.signUpPerIp.windowMs)
    const prefix = randomClientAddress().split(':').slice(0, 4).join(':')
    for (let attempt = 0; attempt < 20; attempt++) {
      await signUp({ email: randomEmail(), password: 'x' }, { remoteAddress: `${prefix}::${attempt.toString(16)}` })
    }
    const refused = await signUp({ email: randomEmail(), password: 'long enough password' }, { remoteAddress: `${prefix}::ffff` })
    expect(refused.statusCode).toBe(429)
  })

  it('rate-limits sign-ups per e-mail address, whatever the IP', async () => {
    await startWithinOneWindow(credentialRateLimits.signUpPerEmail.windowMs)
    const email = randomEmail()
    for (let attempt = 0; attempt < 5; attempt++) await signUp({ email, password: 'long enough password' })
    const refused = await signUp({ email: email.toUpperCase(), password: 'long enough password' })
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toMatch(/^\d+$/)
  })
})

describe.each([
  { name: 'embedded', options: {}, available: true },
  { name: 'PostgreSQL', options: { database: 'postgres' as const }, available: hasPostgres },
])('SIGNUPS, who may sign up ($name)', ({ options, available }) => {
  /** Each test starts a service on a fresh database: some 10 s on the embedded one alone, more on a busy machine. */
  const FRESH_SERVICE_TIMEOUT_MS = 90_000
  /** setupCode null sends none; undefined sends the current one. */
  const signUp = async (service: TestApp, email = randomEmail(), setupCode?: string | null) => {
    const code = setupCode === undefined ? await currentSetupCode(service.app) : setupCode
    return service.app.inject({
      method: 'POST',
      url: '/api/v1/accounts',
      payload: { email, password: 'long enough password', ...(code === null ? {} : { setupCode: code }) },
      remoteAddress: randomClientAddress(),
    })
  }
  const isOpen = async (service: TestApp) => (await service.app.inject({ method: 'GET', url: '/api/v1/sign-up' })).json<{ open: boolean }>().open
  const countAccounts = async (service: TestApp) =>
    (await service.app.database.query<{ count: number }>('SELECT count(*)::int AS count FROM accounts'))[0]?.count

  it.skipIf(!available)('first: the first account needs the setup code the server logs at start; without it nobody takes the server', async () => {
    const logged: string[] = []
    const service = await buildTestApp({ ...options, env: { SIGNUPS: 'first' }, logStream: { write: (line: string) => void logged.push(line) } })
    try {
      expect((await service.app.inject({ method: 'GET', url: '/api/v1/sign-up' })).json()).toEqual({ open: true, setupCodeRequired: true })
      const code = await currentSetupCode(service.app)
      expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/)
      expect(logged.join('')).toContain(`setup code ${code}`)

      const missing = await signUp(service, randomEmail(), null)
      expect(missing.statusCode).toBe(403)
      expect(missing.json().error).toMatchObject({ code: 'setup_code_invalid', details: [{ field: 'setupCode', message: expect.stringContaining('required') }] })
      const wrong = await signUp(service, randomEmail(), 'AAAA-BBBB-CCCC-DDDD')
      expect(wrong.statusCode).toBe(403)
      expect(wrong.json().error.code).toBe('setup_code_invalid')
      expect(await countAccounts(service)).toBe(0)
      expect(await isOpen(service)).toBe(true)
      // As typed off a log: any letter case, without dashes or with spaces.
      expect((await signUp(service, randomEmail(), ` ${code.toLowerCase().replaceAll('-', ' ')} `)).statusCode).toBe(201)
      // Closed now, and nothing is asked for.
      expect((await service.app.inject({ method: 'GET', url: '/api/v1/sign-up' })).json()).toEqual({ open: false, setupCodeRequired: false })
    } finally {
      await service.close()
    }
  }, FRESH_SERVICE_TIMEOUT_MS)

  it.skipIf(!available)('first: a setup code is void once used; after the last account is deleted the log tells a new one', async () => {
    const logged: string[] = []
    const service = await buildTestApp({ ...options, env: { SIGNUPS: 'first' }, logStream: { write: (line: string) => void logged.push(line) } })
    try {
      const firstCode = await currentSetupCode(service.app)
      expect(logged.join('')).toContain(`setup code ${firstCode}`)
      const account = await createTestAccount(service.app)
      const deletion = await service.app.inject({ method: 'DELETE', url: '/api/v1/me', headers: asBrowser(account), payload: { password: account.password } })
      expect(deletion.statusCode).toBe(204)
      expect(await isOpen(service)).toBe(true)

      // Whoever read the old log (or the code's first use) cannot take the emptied server.
      const replay = await signUp(service, randomEmail(), firstCode)
      expect(replay.statusCode).toBe(403)
      expect(replay.json().error.code).toBe('setup_code_invalid')
      const newCode = await currentSetupCode(service.app)
      expect(newCode).not.toBe(firstCode)
      expect(logged.filter((line) => line.includes('No account yet')).at(-1)).toContain(`setup code ${newCode}`)
      expect((await signUp(service, randomEmail(), newCode)).statusCode).toBe(201)
    } finally {
      await service.close()
    }
  }, FRESH_SERVICE_TIMEOUT_MS)

  it.skipIf(!available)('first: takes one sign-up, the first of several sent at once, then answers 403 sign_up_closed', async () => {
    const service = await buildTestApp({ ...options, env: { SIGNUPS: 'first' } })
    try {
      expect(await isOpen(service)).toBe(true)
      const answers = await Promise.all(Array.from({ length: 5 }, () => signUp(service)))
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 403, 403, 403, 403])
      expect(answers.find((answer) => answer.statusCode === 403)?.json().error).toMatchObject({
        code: 'sign_up_closed',
        message: 'Sign-ups are closed on this server; ask its operator for an account.',
      })
      expect(await isOpen(service)).toBe(false)
      expect((await signUp(service)).statusCode).toBe(403)
      const [{ count } = { count: 0 }] = await service.app.database.query<{ count: number }>('SELECT count(*)::int AS count FROM accounts')
      expect(count).toBe(1)
    } finally {
      await service.close()
    }
  }, FRESH_SERVICE_TIMEOUT_MS)

  it.skipIf(!available)('closed: every sign-up is refused with 403 sign_up_closed, and no account is made', async () => {
    const service = await buildTestApp({ ...options, env: { SIGNUPS: 'closed' } })
    try {
      expect(await isOpen(service)).toBe(false)
      const refused = await signUp(service)
      expect(refused.statusCode).toBe(403)
      expect(refused.json().error.code).toBe('sign_up_closed')
      const [{ count } = { count: 0 }] = await service.app.database.query<{ count: number }>('SELECT count(*)::int AS count FROM accounts')
      expect(count).toBe(0)
    } finally {
      await service.close()
    }
  }, FRESH_SERVICE_TIMEOUT_MS)

  it.skipIf(!available)('open (the default outside production): anyone may sign up, however many accounts exist', async () => {
    const service = await buildTestApp(options)
    try {
      expect(service.config.signUps).toBe('open')
      for (let index = 0; index < 3; index++) expect((await signUp(service)).statusCode).toBe(201)
      expect(await isOpen(service)).toBe(true)
    } finally {
      await service.close()
    }
  }, FRESH_SERVICE_TIMEOUT_MS)
})

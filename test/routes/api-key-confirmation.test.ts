import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createApiKeyRepository } from '../../src/storage/sql/api-key-repository.js'
import { asBrowser, createTestAccount, randomClientAddress, type TestAccount } from '../helpers/dashboard-client.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { authenticatorCode, enableTwoFactor } from '../helpers/two-factor.js'

const NOT_CURRENT_PASSWORD = { field: 'password', message: 'is not your current password' }
const CODE_REQUIRED = { field: 'code', message: 'is required: two-factor authentication is on' }
const WRONG_CODE = { field: 'code', message: "is not the authenticator app's current code, nor an unused recovery code" }

/**
 * A new API key is confirmed by the account's password and, while two-factor authentication is
 * on, a code of the second factor: a stolen session cookie alone cannot make a lasting credential.
 */
describe.each(deployments)('confirming a new API key on $name', ({ available, options }) => {
  let service: TestApp
  beforeAll(async () => {
    if (available) service = await buildTestApp(options)
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  // From an address of its own: the password's checks count against the client's budget.
  const create = (account: Pick<TestAccount, 'cookie'>, payload: object) =>
    service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: asBrowser(account), payload: { name: 'deploy', ...payload }, remoteAddress: randomClientAddress() })
  const keyNames = async (account: TestAccount) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: asBrowser(account) })).json<{ items: { name: string }[] }>().items.map((key) => key.name)
  const auditActions = async (account: TestAccount) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/audit-log', headers: asBrowser(account) }))
      .json<{ items: { action: string; details: Record<string, unknown> }[] }>()
      .items.map(({ action, details }) => ({ action, details }))
  const recoveryCodesLeft = async (account: TestAccount) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/me/two-factor', headers: asBrowser(account) })).json<{ recoveryCodesLeft: number }>().recoveryCodesLeft

  it.skipIf(!available)('asks for the password: none or a wrong one makes nothing, and a wrong one is recorded', async () => {
    const account = await createTestAccount(service.app)
    const eventsBefore = (await auditActions(account)).filter((event) => event.action === 'api_key.created')

    const missing = await create(account, {})
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error).toMatchObject({ code: 'validation_error', details: [{ field: 'password' }] })
    const wrong = await create(account, { password: 'not the password' })
    expect(wrong.statusCode).toBe(400)
    expect(wrong.json().error).toMatchObject({ code: 'validation_error', details: [NOT_CURRENT_PASSWORD] })

    expect(await keyNames(account)).toEqual(['test key'])
    const events = await auditActions(account)
    expect(events.filter((event) => event.action === 'api_key.created')).toEqual(eventsBefore)
    expect(events.filter((event) => event.action === 'account.password_check_failed')).toEqual([
      { action: 'account.password_check_failed', details: expect.objectContaining({ count: 1 }) as unknown },
    ])
    expect((await create(account, { password: account.password })).statusCode).toBe(201)
  })

  it.skipIf(!available)('with two-factor on, asks for a code too: a missing or wrong one makes nothing, a right one works once', async () => {
    // The wrong codes below are counted in one event per UTC hour.
    await startWithinOneWindow(3_600_000)
    const account = await createTestAccount(service.app)
    const { secret } = await enableTwoFactor(service.app, account)

    const missing = await create(account, { password: account.password })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error.details).toEqual([CODE_REQUIRED])
    // Every problem at once: the password's and the code's.
    expect((await create(account, { password: 'not it', code: ' ' })).json().error.details).toEqual([NOT_CURRENT_PASSWORD, CODE_REQUIRED])
    const wrong = await create(account, { password: account.password, code: 'abcd-efgh-jkmn' })
    expect(wrong.statusCode).toBe(400)
    expect(wrong.json().error.details).toEqual([WRONG_CODE])
    expect(await keyNames(account)).toEqual(['test key'])

    // The code that turned it on was taken; the next step's works, once.
    const code = authenticatorCode(secret, 1)
    const created = await create(account, { password: account.password, code, access: 'read' })
    expect(created.statusCode, created.body).toBe(201)
    expect(created.json()).toMatchObject({ name: 'deploy', access: 'read', expiresAt: null })
    expect((await create(account, { name: 'again', password: account.password, code })).json().error.details).toEqual([WRONG_CODE])
    expect(await keyNames(account)).toEqual(['test key', 'deploy'])
    const events = await auditActions(account)
    expect(events.find((event) => event.action === 'account.two_factor_failed')?.details).toMatchObject({ count: 2 })
    expect(events.filter((event) => event.action === 'api_key.created').map((event) => event.details.name)).toEqual(['deploy', 'test key'])
  })

  it.skipIf(!available)('takes a recovery code instead, used up and recorded', async () => {
    const account = await createTestAccount(service.app)
    const { recoveryCodes } = await enableTwoFactor(service.app, account)
    const created = await create(account, { password: account.password, code: recoveryCodes[0]?.toUpperCase() })
    expect(created.statusCode, created.body).toBe(201)
    expect(await recoveryCodesLeft(account)).toBe(9)
    expect((await create(account, { name: 'again', password: account.password, code: recoveryCodes[0] })).json().error.details).toEqual([WRONG_CODE])
    const events = await auditActions(account)
    expect(events.find((event) => event.action === 'account.recovery_code_used')?.details).toEqual({ recoveryCodesLeft: 9 })
    expect(await keyNames(account)).toEqual(['test key', 'deploy'])
  })

  it.skipIf(!available)('leaves the code unused when the password, the name or the expiry is wrong, or the account holds 100 keys', async () => {
    const account = await createTestAccount(service.app)
    const { recoveryCodes } = await enableTwoFactor(service.app, account)
    const code = recoveryCodes[0]
    expect((await create(account, { password: 'not it', code })).json().error.details).toEqual([NOT_CURRENT_PASSWORD])
    expect((await create(account, { name: ' ', password: account.password, code })).json().error.details).toEqual([{ field: 'name', message: 'must not be empty' }])
    expect((await create(account, { expiresAt: '2020-01-01T00:00:00Z', password: account.password, code })).json().error.details).toEqual([
      { field: 'expiresAt', message: 'must be in the future' },
    ])
    const apiKeys = createApiKeyRepository(service.app.database)
    for (let index = 0; index < 99; index++) {
      await apiKeys.create(account.id, { name: `key ${index}`, prefix: 'tgak_seeded', keyHash: randomUUID(), access: 'full', expiresAt: null }, 100)
    }
    const full = await create(account, { password: account.password, code })
    expect(full.statusCode).toBe(409)
    expect(full.json().error.code).toBe('conflict')
    expect(await recoveryCodesLeft(account)).toBe(10)
    expect((await auditActions(account)).some((event) => event.action === 'account.recovery_code_used')).toBe(false)
  })

  it.skipIf(!available)('asks for no code while two-factor is off, and ignores one sent', async () => {
    const account = await createTestAccount(service.app)
    const created = await create(account, { password: account.password, code: '123456' })
    expect(created.statusCode, created.body).toBe(201)
  })

  it.skipIf(!available)("spends none of the log-in's budgets on a right password: more keys in a row than they allow, and a log-in from there after", async () => {
    // Across a window's end the counts start again, and the test would prove nothing.
    await startWithinOneWindow(10 * 60_000, 20_000)
    const account = await createTestAccount(service.app)
    const remoteAddress = randomClientAddress()
    // The log-in's budget of one client for one account is 10 attempts in 10 minutes.
    for (let index = 0; index < 12; index++) {
      const created = await service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: asBrowser(account), payload: { name: `deploy ${index}`, password: account.password }, remoteAddress })
      expect(created.statusCode, created.body).toBe(201)
    }
    const logIn = await service.app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: account.email, password: account.password }, remoteAddress })
    expect(logIn.statusCode, logIn.body).toBe(200)
    // A wrong one still counts (the right ones above, the log-in's too, were given back): ten, then the budget is spent.
    for (let index = 0; index < 10; index++) {
      expect((await service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: asBrowser(account), payload: { name: 'x', password: 'guess' }, remoteAddress })).statusCode).toBe(400)
    }
    expect((await service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: asBrowser(account), payload: { name: 'x', password: account.password }, remoteAddress })).statusCode).toBe(429)
  })

  it.skipIf(!available)("spends none of the second factor's budgets on right codes: more keys in a row than they allow, and a log-in with a code from there after", async () => {
    await startWithinOneWindow(15 * 60_000, 20_000)
    const account = await createTestAccount(service.app)
    const { secret, recoveryCodes } = await enableTwoFactor(service.app, account)
    const remoteAddress = randomClientAddress()
    // The second factor's budget of one client for one account is 5 codes in a quarter hour.
    for (const [index, code] of recoveryCodes.slice(0, 7).entries()) {
      const created = await service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: asBrowser(account), payload: { name: `deploy ${index}`, password: account.password, code }, remoteAddress })
      expect(created.statusCode, created.body).toBe(201)
    }
    const logIn = await service.app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: account.email, password: account.password, code: authenticatorCode(secret, 1) }, remoteAddress })
    expect(logIn.statusCode, logIn.body).toBe(200)
  })

  it.skipIf(!available)("refuses an expiry this service's clock finds ahead and the database's, which judges the key, does not", async () => {
    const account = await createTestAccount(service.app)
    const { recoveryCodes } = await enableTwoFactor(service.app, account)
    // A minute ago by the database's clock, four minutes ahead by this service's, five behind.
    const expiresAt = new Date(Date.now() - 60_000).toISOString()
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 5 * 60_000 })
    try {
      const refused = await create(account, { password: account.password, code: recoveryCodes[0], expiresAt })
      expect(refused.statusCode, refused.body).toBe(400)
      expect(refused.json().error.details).toEqual([{ field: 'expiresAt', message: 'must be in the future' }])
    } finally {
      vi.useRealTimers()
    }
    expect(await keyNames(account)).toEqual(['test key'])
    // The code was not used up: it makes the key once the expiry is ahead.
    const created = await create(account, { password: account.password, code: recoveryCodes[0], expiresAt: new Date(Date.now() + 3_600_000).toISOString() })
    expect(created.statusCode, created.body).toBe(201)
  })
})

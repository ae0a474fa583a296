import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, asScript, createTestAccount, OWN_ORIGIN, randomClientAddress, sessionCookieOf, type TestAccount } from '../helpers/dashboard-client.js'
import { addPasskey, createSoftwareAuthenticator, passkeyRegistrationOptions, signInWithPasskey } from '../helpers/software-authenticator.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { authenticatorApp, enableTwoFactor } from '../helpers/two-factor.js'

interface PasskeyView {
  id: string
  name: string
  createdAt: string
  lastUsedAt: string | null
}

describe.each(deployments)("an account's passkeys on $name", ({ available, options }) => {
  let service: TestApp
  beforeAll(async () => {
    if (available) service = await buildTestApp(options)
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  const list = async (account: Pick<TestAccount, 'cookie'>) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/me/passkeys', headers: asBrowser(account) })).json<{ items: PasskeyView[] }>().items
  const rename = (account: Pick<TestAccount, 'cookie'>, id: string, name: string) =>
    service.app.inject({ method: 'PUT', url: `/api/v1/me/passkeys/${id}`, headers: asBrowser(account), payload: { name } })
  const remove = (account: Pick<TestAccount, 'cookie'>, id: string, payload: object) =>
    service.app.inject({ method: 'DELETE', url: `/api/v1/me/passkeys/${id}`, headers: asBrowser(account), payload, remoteAddress: randomClientAddress() })
  const auditEvents = async (account: TestAccount) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/audit-log', headers: asBrowser(account) }))
      .json<{ items: { action: string; details: Record<string, unknown> }[] }>()
      .items.filter(({ action }) => action.startsWith('account.passkey_'))
      .map(({ action, details }) => ({ action, details }))
  const errorOf = (response: { json: () => unknown }) => (response.json() as { error: { code: string; details?: { field?: string }[] } }).error

  it.skipIf(!available)('adds a passkey with the password, lists it, renames it and removes it, each change in the audit log', async () => {
    const account = await createTestAccount(service.app)
    expect(await list(account)).toEqual([])
    const authenticator = createSoftwareAuthenticator()

    const added = await addPasskey(service.app, account, authenticator, { name: '  Work laptop ' })
    expect(added.statusCode, added.body).toBe(201)
    const passkey = added.json<PasskeyView>()
    expect(passkey).toMatchObject({ name: 'Work laptop', lastUsedAt: null })
    expect(Date.now() - Date.parse(passkey.createdAt)).toBeLessThan(60_000)
    expect(await list(account)).toEqual([passkey])

    const renamed = await rename(account, passkey.id, 'Phone')
    expect(renamed.statusCode, renamed.body).toBe(200)
    expect(renamed.json()).toMatchObject({ id: passkey.id, name: 'Phone' })
    expect((await list(account)).map(({ name }) => name)).toEqual(['Phone'])
    expect(errorOf(await rename(account, passkey.id, '  '))).toMatchObject({ code: 'validation_error', details: [{ field: 'name' }] })
    expect(errorOf(await rename(account, '00000000-0000-4000-8000-000000000000', 'Other')).code).toBe('not_found')

    const removed = await remove(account, passkey.id, { password: account.password })
    expect(removed.statusCode, removed.body).toBe(204)
    expect(await list(account)).toEqual([])
    expect(errorOf(await remove(account, passkey.id, { password: account.password })).code).toBe('not_found')

    expect((await auditEvents(account)).reverse()).toEqual([
      { action: 'account.passkey_added', details: { passkeyId: passkey.id, name: 'Work laptop' } },
      { action: 'account.passkey_renamed', details: { passkeyId: passkey.id, from: 'Work laptop', to: 'Phone' } },
      { action: 'account.passkey_removed', details: { passkeyId: passkey.id, name: 'Phone', endedSessions: 0 } },
    ])
  })

  it.skipIf(!available)('asks adding and removing for the current password, and with two-factor on for a code; a wrong password leaves the answer to send again', async () => {
    const account = await createTestAccount(service.app)
    const authenticator = createSoftwareAuthenticator()
    const options = await passkeyRegistrationOptions(service.app, account)
    const answer = authenticator.attest(options)
    const send = (payload: object) =>
      service.app.inject({ method: 'POST', url: '/api/v1/me/passkeys', headers: asBrowser(account), payload: { name: 'Key', credential: answer, ...payload }, remoteAddress: randomClientAddress() })

    const wrongPassword = await send({ password: 'not the password' })
    expect(wrongPassword.statusCode).toBe(400)
    expect(errorOf(wrongPassword)).toMatchObject({ code: 'validation_error', details: [{ field: 'password' }] })
    expect(await list(account)).toEqual([])
    // The challenge was not spent on the wrong password: the same answer adds the passkey.
    const added = await send({ password: account.password })
    expect(added.statusCode, added.body).toBe(201)
    // Once: the answer sent again is refused.
    expect(errorOf(await send({ password: account.password }))).toMatchObject({ code: 'validation_error', details: [{ field: 'credential' }] })

    const { secret, recoveryCodes } = await enableTwoFactor(service.app, account)
    const [firstCode = '', secondCode = ''] = recoveryCodes
    const second = createSoftwareAuthenticator()
    const withoutCode = await addPasskey(service.app, account, second)
    expect(errorOf(withoutCode)).toMatchObject({ code: 'validation_error', details: [{ field: 'code' }] })
    const wrongCode = await addPasskey(service.app, account, second, { code: authenticatorApp(secret).wrongCode() })
    expect(errorOf(wrongCode)).toMatchObject({ code: 'validation_error', details: [{ field: 'code' }] })
    expect(await list(account)).toHaveLength(1)
    const withCode = await addPasskey(service.app, account, second, { code: firstCode })
    expect(withCode.statusCode, withCode.body).toBe(201)

    const id = added.json<PasskeyView>().id
    expect(errorOf(await remove(account, id, { password: account.password }))).toMatchObject({ code: 'validation_error', details: [{ field: 'code' }] })
    expect(errorOf(await remove(account, id, { password: 'wrong', code: secondCode }))).toMatchObject({ code: 'validation_error', details: [{ field: 'password' }] })
    expect(await list(account)).toHaveLength(2)
    expect((await remove(account, id, { password: account.password, code: secondCode })).statusCode).toBe(204)
    expect((await list(account)).map(({ name }) => name)).toEqual(['Test passkey'])
  })

  it.skipIf(!available)('is a logged-in session\'s only: an API key may neither read nor change passkeys', async () => {
    const account = await createTestAccount(service.app)
    const asKey = { ...asScript(account), origin: OWN_ORIGIN }
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/me/passkeys', headers: asKey })).statusCode).toBe(403)
    expect((await service.app.inject({ method: 'POST', url: '/api/v1/me/passkeys/options', headers: asKey, payload: {} })).statusCode).toBe(403)
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/me/passkeys' })).statusCode).toBe(401)
  })

  it.skipIf(!available)('refuses an answer made on another origin or for another RP ID, or without user verification, and another session\'s challenge', async () => {
    const account = await createTestAccount(service.app)
    const authenticator = createSoftwareAuthenticator()
    for (const overrides of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }, { userVerified: false }]) {
      const refused = await addPasskey(service.app, account, authenticator, {}, overrides)
      expect(refused.statusCode, JSON.stringify(overrides)).toBe(400)
      expect(errorOf(refused)).toMatchObject({ code: 'validation_error', details: [{ field: 'credential' }] })
    }
    // Options of another account's session are no challenge of this one.
    const other = await createTestAccount(service.app)
    const othersOptions = await passkeyRegistrationOptions(service.app, other)
    const stolen = await service.app.inject({
      method: 'POST',
      url: '/api/v1/me/passkeys',
      headers: asBrowser(account),
      payload: { name: 'Key', password: account.password, credential: authenticator.attest(othersOptions) },
      remoteAddress: randomClientAddress(),
    })
    expect(errorOf(stolen)).toMatchObject({ code: 'validation_error', details: [{ field: 'credential' }] })
    const garbage = await service.app.inject({
      method: 'POST',
      url: '/api/v1/me/passkeys',
      headers: asBrowser(account),
      payload: { name: 'Key', password: account.password, credential: { id: 'x', rawId: 'x', type: 'public-key', response: { clientDataJSON: 'bm90IGpzb24', attestationObject: 'AAAA' } } },
      remoteAddress: randomClientAddress(),
    })
    expect(garbage.statusCode).toBe(400)
    expect(await list(account)).toEqual([])
  })

  it.skipIf(!available)('holds at most 10 passkeys, exactly, also when two are added at once', async () => {
    const account = await createTestAccount(service.app)
    for (let index = 0; index < 9; index += 1) {
      const added = await addPasskey(service.app, account, createSoftwareAuthenticator(), { name: `Key ${index + 1}` })
      expect(added.statusCode, added.body).toBe(201)
    }
    // Two answers to options asked for while the account held 9, by two of its sessions (a session
    // has one challenge at a time), sent at once: one is added.
    const loggedIn = await service.app.inject({
      method: 'POST',
      url: '/api/v1/sessions',
      headers: { origin: OWN_ORIGIN },
      payload: { email: account.email, password: account.password },
      remoteAddress: randomClientAddress(),
    })
    const sessions = [account, { cookie: sessionCookieOf(loggedIn.headers['set-cookie']) }]
    const answers = await Promise.all(sessions.map(async (session) => createSoftwareAuthenticator().attest(await passkeyRegistrationOptions(service.app, session))))
    const outcomes = await Promise.all(
      answers.map((credential, index) =>
        service.app.inject({
          method: 'POST',
          url: '/api/v1/me/passkeys',
          headers: asBrowser(sessions[index] ?? account),
          payload: { name: 'Raced', password: account.password, credential },
          remoteAddress: randomClientAddress(),
        }),
      ),
    )
    expect(outcomes.map((outcome) => outcome.statusCode).sort()).toEqual([201, 409])
    expect(await list(account)).toHaveLength(10)
    const full = await service.app.inject({ method: 'POST', url: '/api/v1/me/passkeys/options', headers: asBrowser(account), payload: {} })
    expect(full.statusCode).toBe(409)
    expect(errorOf(full).code).toBe('conflict')
  })

  it.skipIf(!available)('keeps one registration challenge per session: new options replace the last, whose answer is refused', async () => {
    const account = await createTestAccount(service.app)
    const authenticator = createSoftwareAuthenticator()
    const first = await passkeyRegistrationOptions(service.app, account)
    const second = await passkeyRegistrationOptions(service.app, account)
    expect(second.challenge).not.toBe(first.challenge)
    const send = (credential: object) =>
      service.app.inject({ method: 'POST', url: '/api/v1/me/passkeys', headers: asBrowser(account), payload: { name: 'Key', password: account.password, credential }, remoteAddress: randomClientAddress() })
    expect(errorOf(await send(authenticator.attest(first)))).toMatchObject({ code: 'validation_error', details: [{ field: 'credential' }] })
    const added = await send(authenticator.attest(second))
    expect(added.statusCode, added.body).toBe(201)
    expect(await list(account)).toHaveLength(1)
  })

  it.skipIf(!available)('refuses a credential registered to another account already', async () => {
    const owner = await createTestAccount(service.app)
    const other = await createTestAccount(service.app)
    const authenticator = createSoftwareAuthenticator()
    expect((await addPasskey(service.app, owner, authenticator)).statusCode).toBe(201)
    const again = await addPasskey(service.app, other, authenticator)
    expect(again.statusCode).toBe(400)
    expect(errorOf(again)).toMatchObject({ code: 'validation_error', details: [{ field: 'credential' }] })
    expect(await list(other)).toEqual([])
    expect(await list(owner)).toHaveLength(1)
    const signedIn = await signInWithPasskey(service.app, authenticator)
    expect(signedIn.json()).toMatchObject({ id: owner.id })
  })

  it.skipIf(!available)('answers the limit with the list', async () => {
    const account = await createTestAccount(service.app)
    const listed = await service.app.inject({ method: 'GET', url: '/api/v1/me/passkeys', headers: asBrowser(account) })
    expect(listed.json()).toEqual({ items: [], limit: 10 })
  })

  it.skipIf(!available)('ends the sessions a passkey opened when it is removed, and not the others', async () => {
    const account = await createTestAccount(service.app)
    const removedKey = createSoftwareAuthenticator()
    const keptKey = createSoftwareAuthenticator()
    const added = await addPasskey(service.app, account, removedKey, { name: 'Lost' })
    expect((await addPasskey(service.app, account, keptKey, { name: 'Kept' })).statusCode).toBe(201)
    const sessionOf = async (authenticator: typeof removedKey) => {
      const signedIn = await signInWithPasskey(service.app, authenticator)
      expect(signedIn.statusCode, signedIn.body).toBe(200)
      return { cookie: sessionCookieOf(signedIn.headers['set-cookie']) }
    }
    const opened = [await sessionOf(removedKey), await sessionOf(removedKey)]
    const other = await sessionOf(keptKey)
    const isLive = async (session: { cookie: string }) => (await service.app.inject({ method: 'GET', url: '/api/v1/me', headers: asBrowser(session) })).statusCode === 200
    expect(await Promise.all([...opened, other].map(isLive))).toEqual([true, true, true])

    expect((await remove(account, added.json<PasskeyView>().id, { password: account.password })).statusCode).toBe(204)
    expect(await Promise.all(opened.map(isLive))).toEqual([false, false])
    expect(await isLive(other)).toBe(true)
    expect(await isLive(account)).toBe(true)
    expect((await auditEvents(account))[0]).toMatchObject({ action: 'account.passkey_removed', details: { name: 'Lost', endedSessions: 2 } })
  })

  it.skipIf(!available)('signs in no more with a passkey once it is removed', async () => {
    const account = await createTestAccount(service.app)
    const authenticator = createSoftwareAuthenticator()
    const added = await addPasskey(service.app, account, authenticator)
    expect((await signInWithPasskey(service.app, authenticator)).statusCode).toBe(200)
    expect((await remove(account, added.json<PasskeyView>().id, { password: account.password })).statusCode).toBe(204)
    const refused = await signInWithPasskey(service.app, authenticator)
    expect(refused.statusCode).toBe(401)
    expect(errorOf(refused).code).toBe('passkey_unknown')
    expect(refused.headers['set-cookie']).toBeUndefined()
  })
})

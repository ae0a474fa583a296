import { spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createKeyRing } from '../src/secret.js'
import { openStorage } from '../src/storage/open-storage.js'
import { randomClientAddress, sessionCookieOf } from './helpers/dashboard-client.js'
import { deviceCookieOf, spendBudgetFromEverywhere } from './helpers/known-device.js'
import { startWithinOneWindow } from './helpers/rate-limit-window.js'
import { credentialRateLimits } from '../src/routes/v1/accounts/rate-limits.js'
import { hasTerminal, runOnTerminal } from './helpers/terminal.js'
import { TEST_SECRET } from './helpers/test-app.js'
import { enableTwoFactor } from './helpers/two-factor.js'
import { asBrowser, asScript, createTestAccount, createTestSite, type TestAccount } from './helpers/dashboard-client.js'
import { createScratchDatabase, type ScratchDatabase } from './helpers/scratch-database.js'
import { hasPostgres } from './helpers/services.js'
import { acceptInvitation, inviteTo, shareSite } from './helpers/site-sharing.js'

/** `npm run account`, as an operator runs it on the server's embedded database. */
const dataDirectory = mkdtempSync(join(tmpdir(), 'tollgate-account-'))

/**
 * Runs it with `password` on standard input. Each run starts Node, tsx and the embedded database:
 * some 3 to 5 s alone, up to 30 s on a busy machine, which the tests' timeouts allow for.
 */
function account(args: string[], password: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/account.ts', ...args], {
    env: { ...process.env, NODE_ENV: 'production', TOLLGATE_SECRET: TEST_SECRET, DATA_DIR: dataDirectory },
    input: `${password}\n`,
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() }
}

/** The service on that database, with sign-ups closed, for as long as `use` runs. */
async function withService(use: (app: App) => Promise<void>): Promise<void> {
  const config = loadConfig({ NODE_ENV: 'production', TOLLGATE_SECRET: TEST_SECRET, DATA_DIR: dataDirectory, SIGNUPS: 'closed', LOG_LEVEL: 'silent' })
  const app = await buildApp({ config, storage: await openStorage(config), keyRing: createKeyRing(TEST_SECRET), logger: false })
  try {
    await use(app)
  } finally {
    await app.close()
  }
}

const logIn = (app: App, password: string) =>
  app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: 'owner@example.com', password }, remoteAddress: randomClientAddress() })

describe('npm run account', () => {
  it('creates an account on a server whose sign-ups are closed, and sets a lost password, ending its sessions', async () => {
    const created = account(['create', 'owner@example.com'], 'first password here')
    expect(created).toMatchObject({ status: 0, stdout: expect.stringMatching(/^created the account owner@example\.com \([0-9a-f-]{36}\) in the embedded database in \/.+\/pglite$/) })

    let cookie = ''
    await withService(async (app) => {
      const answer = await logIn(app, 'first password here')
      expect(answer.statusCode).toBe(200)
      cookie = sessionCookieOf(answer.headers['set-cookie'])
      // While the service holds the embedded database, the script may not open it.
      const refused = account(['set-password', 'owner@example.com'], 'second password here')
      expect(refused.status).toBe(1)
      expect(refused.stderr).toMatch(/^tollgate account: DATA_DIR .* is in use by another Tollgate process/)
    })

    expect(account(['create', 'OWNER@example.com'], 'another password')).toMatchObject({
      status: 1,
      stderr: 'tollgate account: an account with the address OWNER@example.com exists already (set its password with set-password)',
    })
    expect(account(['set-password', 'owner@example.com'], 'short')).toMatchObject({ status: 1, stderr: 'tollgate account: the password must be at least 10 characters' })
    expect(account(['set-password', 'owner@example.com'], 'password123')).toMatchObject({ status: 1, stderr: expect.stringMatching(/^tollgate account: the password is too common/) as string })
    expect(account(['create', 'someone@example.com'], 'someone@example.com')).toMatchObject({
      status: 1,
      stderr: 'tollgate account: the password must not contain your e-mail address or the part before its @',
    })
    expect(account(['set-password', 'owner@example.com'], 'second password here')).toMatchObject({
      status: 0,
      stdout: expect.stringMatching(/^set the password of owner@example\.com in the embedded database in \/.+\/pglite; ended 1 session\(s\)\. Its passkeys were kept and still log in: the owner removes any not to trust on the Account page$/) as string,
    })

    await withService(async (app) => {
      expect((await app.inject({ method: 'GET', url: '/api/v1/me', headers: { cookie } })).statusCode).toBe(401)
      expect((await logIn(app, 'first password here')).statusCode).toBe(401)
      const loggedIn = await logIn(app, 'second password here')
      expect(loggedIn.statusCode).toBe(200)
      // The owner's audit log says the server's operator made the account and set its password.
      const audit = await app.inject({
        method: 'GET',
        url: '/api/v1/audit-log?limit=200',
        headers: { cookie: sessionCookieOf(loggedIn.headers['set-cookie']) },
      })
      const events = audit.json<{ items: { action: string; actor: { type: string }; details: object }[] }>().items.reverse()
      expect(events.filter((event) => event.actor.type === 'operator')).toEqual([
        expect.objectContaining({ action: 'account.created', actor: expect.objectContaining({ clientIp: null }), details: {} }),
        expect.objectContaining({ action: 'account.password_set', details: { endedSessions: 1 } }),
      ])
    })
  }, 180_000)

  it('turns two-factor authentication off for an owner who lost the app and the recovery codes; the next log-in needs only the password', async () => {
    const email = 'two-factor@example.com'
    expect(account(['create', email], 'the owner password')).toMatchObject({ status: 0 })
    const logInAs = (app: App) =>
      app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email, password: 'the owner password' }, remoteAddress: randomClientAddress() })
    await withService(async (app) => {
      const cookie = sessionCookieOf((await logInAs(app)).headers['set-cookie'])
      await enableTwoFactor(app, { cookie, password: 'the owner password' })
      expect((await logInAs(app)).json().error.code).toBe('two_factor_required')
    })

    expect(account(['disable-two-factor', email], '')).toMatchObject({
      status: 0,
      stdout: expect.stringMatching(/^turned two-factor authentication off for two-factor@example\.com in the embedded database in \/.+\/pglite; its next log-in needs only the password$/) as string,
    })
    expect(account(['disable-two-factor', email], '')).toMatchObject({ status: 0, stdout: expect.stringMatching(/^two-factor authentication was off already for two-factor@example\.com/) as string })
    expect(account(['disable-two-factor', 'nobody@example.com'], '')).toMatchObject({ status: 1, stderr: expect.stringMatching(/^tollgate account: no account has the address nobody@example\.com/) as string })

    await withService(async (app) => {
      const loggedIn = await logInAs(app)
      expect(loggedIn.statusCode, loggedIn.body).toBe(200)
      const audit = await app.inject({ method: 'GET', url: '/api/v1/audit-log', headers: { cookie: sessionCookieOf(loggedIn.headers['set-cookie']) } })
      const events = audit.json<{ items: { action: string; actor: { type: string } }[] }>().items
      expect(events.filter((event) => ['account.two_factor_enabled', 'account.two_factor_disabled'].includes(event.action)).map((event) => [event.action, event.actor.type])).toEqual([
        ['account.two_factor_disabled', 'operator'],
        ['account.two_factor_enabled', 'session'],
      ])
    })
  }, 120_000)

  it('takes the password on one line, or the same line twice as the prompt asks; refuses anything else rather than store it', () => {
    expect(account(['create', 'twice@example.com'], 'a good long password\na good long password')).toMatchObject({ status: 0 })
    const refusal = 'tollgate account: standard input must hold the password on one line (or twice, the same, as the prompt asks for it)'
    expect(account(['create', 'differ@example.com'], 'a good long password\nanother long password')).toMatchObject({ status: 1, stderr: refusal })
    expect(account(['create', 'three@example.com'], 'a good long password\na good long password\nx')).toMatchObject({ status: 1, stderr: refusal })
  }, 120_000)

  it('names what is wrong with its arguments, and prints its usage on --help', () => {
    const usage = account(['--help'], '')
    expect(usage).toMatchObject({ status: 0, stderr: '', stdout: expect.stringMatching(/^usage: npm run account -- create <e-mail address>\n/) as string })
    // What happens to the password: no "(on standard input)" for a terminal that prompts twice.
    expect(usage.stdout).toContain('ask for the password twice, without echo, on a terminal; otherwise they read it from\nstandard input, one line')
    expect(account(['-h'], '')).toEqual(usage)
    expect(account([], '')).toMatchObject({ status: 1, stdout: '', stderr: `tollgate account: ${usage.stdout}` })
    expect(account(['remove', 'owner@example.com'], 'x')).toMatchObject({ status: 1, stderr: `tollgate account: ${usage.stdout}` })
    expect(account(['toString', 'owner@example.com'], 'x')).toMatchObject({ status: 1, stderr: `tollgate account: ${usage.stdout}` })
    expect(usage.stdout).toContain('npm run account -- disable <e-mail address>')
    expect(account(['set-password', 'nobody@example.com'], 'a good long password')).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/^tollgate account: no account has the address nobody@example\.com in the embedded database in \/.+\/pglite$/) as string,
    })
    expect(account(['create', 'not-an-address'], 'a good long password')).toMatchObject({ status: 1, stderr: 'tollgate account: "not-an-address" is not an e-mail address' })
  }, 120_000)

  it.skipIf(!hasTerminal)('on a terminal, refuses a password too short at its first entry, before asking for it again', () => {
    const ran = runOnTerminal(['scripts/account.ts', 'create', 'terminal@example.com'], { NODE_ENV: 'production', TOLLGATE_SECRET: TEST_SECRET, DATA_DIR: dataDirectory }, 'short\n')
    expect(ran.status).toBe(1)
    expect(ran.output).toContain('Password: \ntollgate account: the password must be at least 10 characters')
    expect(ran.output).not.toContain('again')
  }, 60_000)
})

/** `npm run account` on PostgreSQL, while two instances of the service run on the same database. */
describe.skipIf(!hasPostgres)('npm run account on PostgreSQL, beside running instances', () => {
  let database: ScratchDatabase
  beforeAll(async () => {
    database = await createScratchDatabase('tollgate_account')
  })
  afterAll(() => database?.drop())

  function accountOnPostgres(args: string[]) {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/account.ts', ...args], {
      env: { ...process.env, NODE_ENV: 'production', TOLLGATE_SECRET: TEST_SECRET, DATABASE_URL: database.url },
      input: '',
      encoding: 'utf8',
      timeout: 60_000,
    })
    return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() }
  }

  async function withInstances(use: (first: App, second: App) => Promise<void>): Promise<void> {
    const config = loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET, DATABASE_URL: database.url, LOG_LEVEL: 'silent' })
    const first = await buildApp({ config, storage: await openStorage(config), keyRing: createKeyRing(TEST_SECRET), logger: false })
    const second = await buildApp({ config, storage: await openStorage(config), keyRing: createKeyRing(TEST_SECRET), logger: false })
    try {
      await use(first, second)
    } finally {
      await Promise.all([first.close(), second.close()])
    }
  }

  const logInAs = (app: App, who: TestAccount, password = who.password) =>
    app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: who.email, password }, remoteAddress: randomClientAddress() })

  it('disables a colleague who left: her sessions and API keys stop on every instance at once, her log-in is refused, enable undoes it; end-sessions logs out and keeps the keys', async () => {
    await withInstances(async (first, second) => {
      const owner = await createTestAccount(first)
      const colleague = await createTestAccount(first)
      const knownBeforeDisabled = deviceCookieOf((await logInAs(first, colleague)).headers['set-cookie']) ?? ''
      const site = await createTestSite(first, owner)
      await shareSite(first, owner, colleague, site.id, 'admin')
      // The address-less admin link she could keep, to let herself back in from another account.
      const kept = await inviteTo(first, colleague, site.id, { role: 'admin' })
      for (const app of [first, second]) {
        expect((await app.inject({ method: 'GET', url: '/api/v1/me', headers: asBrowser(colleague) })).statusCode).toBe(200)
        expect((await app.inject({ method: 'GET', url: '/api/v1/me', headers: asScript(colleague) })).statusCode).toBe(200)
      }

      expect(accountOnPostgres(['disable', colleague.email])).toMatchObject({
        status: 0,
        stdout:
          `disabled ${colleague.email} in PostgreSQL at ${new URL(database.url).toString()}: it can no longer log in, 2 session(s) ended, 1 pending invitation(s) it made revoked ` +
          'and its API keys are refused (enable undoes all but the invitations; delete removes it)',
      })
      expect(accountOnPostgres(['disable', colleague.email])).toMatchObject({ status: 0, stdout: expect.stringMatching(/ was disabled already in /) as string })
      for (const app of [first, second]) {
        expect((await app.inject({ method: 'GET', url: '/api/v1/me', headers: asBrowser(colleague) })).statusCode).toBe(401)
        const byKey = await app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}`, headers: asScript(colleague) })
        expect(byKey.statusCode).toBe(401)
        expect(byKey.json().error.message).toBe("The API key's account has been disabled by the operator of this service.")
        expect((await app.inject({ method: 'POST', url: '/api/v1/sites', headers: asScript(colleague), payload: { name: 'Hers' } })).statusCode).toBe(401)
      }
      // A wrong password answers as for any account: being disabled is told only to the right one.
      const guessed = await logInAs(first, colleague, 'not her password at all')
      expect([guessed.statusCode, guessed.json().error.code]).toEqual([401, 'invalid_credentials'])
      const refused = await logInAs(second, colleague)
      expect([refused.statusCode, refused.json().error.code]).toEqual([403, 'account_disabled'])
      expect(refused.headers['set-cookie']).toBeUndefined()
      // Her link lets no one in: it answers as an unknown invitation does, and the owner's log tells why.
      const otherAccount = await createTestAccount(first)
      const accepted = await acceptInvitation(second, otherAccount, kept.token)
      expect([accepted.statusCode, accepted.json().error.code]).toEqual([404, 'not_found'])
      const ownerLog = await first.inject({ method: 'GET', url: `/api/v1/audit-log?limit=200&siteId=${site.id}`, headers: asScript(owner) })
      const revocations = ownerLog.json<{ items: { action: string; actor: { type: string }; site: { id: string } | null; details: object }[] }>().items
        .filter((event) => event.action === 'site.invitation_revoked')
      expect(revocations.map(({ actor, site: revokedFrom, details }) => [actor.type, revokedFrom?.id, details])).toEqual([
        ['operator', site.id, { invitationId: kept.id, role: 'admin', email: null, invitedBy: colleague.email, reason: 'inviter_disabled' }],
      ])
      // The owner's site and keys are untouched.
      expect((await second.inject({ method: 'GET', url: `/api/v1/sites/${site.id}`, headers: asScript(owner) })).statusCode).toBe(200)

      expect(accountOnPostgres(['enable', colleague.email])).toMatchObject({ status: 0, stdout: expect.stringMatching(/^enabled .* it may log in again, and its API keys work again$/) as string })
      expect((await second.inject({ method: 'GET', url: '/api/v1/me', headers: asScript(colleague) })).statusCode).toBe(200)
      expect((await acceptInvitation(first, otherAccount, kept.token)).statusCode).toBe(404)
      const back = await logInAs(first, colleague)
      expect(back.statusCode).toBe(200)
      const cookie = sessionCookieOf(back.headers['set-cookie'])
      const device = deviceCookieOf(back.headers['set-cookie']) ?? ''
      // Her browser known before she was disabled is spared the account's limit from everywhere no
      // more (disable and enable voided its cookie), the one that logged in since still is.
      await startWithinOneWindow(credentialRateLimits.logInPerEmail.windowMs, 60_000)
      await spendBudgetFromEverywhere(first, colleague.email)
      const withDevice = (app: App, deviceCookie: string) => app.inject({
        method: 'POST', url: '/api/v1/sessions', payload: { email: colleague.email, password: colleague.password }, headers: { cookie: deviceCookie }, remoteAddress: randomClientAddress(),
      })
      expect((await withDevice(first, knownBeforeDisabled)).statusCode).toBe(429)
      const spared = await withDevice(first, device)
      expect(spared.statusCode).toBe(200)
      const cookieToo = sessionCookieOf(spared.headers['set-cookie'])

      expect(accountOnPostgres(['end-sessions', colleague.email])).toMatchObject({ status: 0, stdout: expect.stringMatching(/^ended 2 session\(s\) of .*; its API keys still work \(disable refuses them too\)$/) as string })
      expect((await second.inject({ method: 'GET', url: '/api/v1/me', headers: { cookie } })).statusCode).toBe(401)
      expect((await second.inject({ method: 'GET', url: '/api/v1/me', headers: { cookie: cookieToo } })).statusCode).toBe(401)
      // end-sessions voided the known-browser cookies as well.
      expect((await withDevice(first, device)).statusCode).toBe(429)
      const audit = await first.inject({ method: 'GET', url: '/api/v1/audit-log?limit=200', headers: asScript(colleague) })
      const events = audit.json<{ items: { action: string; actor: { type: string }; details: object }[] }>().items.filter((event) => event.actor.type === 'operator').reverse()
      expect(events.map((event) => [event.action, event.details])).toEqual([
        ['account.disabled', { endedSessions: 2 }],
        ['account.enabled', {}],
        ['account.sessions_ended', { endedSessions: 2 }],
      ])
    })
  }, 180_000)

  it('logs every account out on every instance with end-sessions --all, as after a restore, keeping their API keys', async () => {
    await withInstances(async (first, second) => {
      const [owner, colleague] = [await createTestAccount(first), await createTestAccount(first)]
      const secondCookie = sessionCookieOf((await logInAs(second, colleague)).headers['set-cookie'])
      for (const [app, headers] of [[first, asBrowser(owner)], [second, asBrowser(colleague)], [first, { cookie: secondCookie }]] as const) {
        expect((await app.inject({ method: 'GET', url: '/api/v1/me', headers })).statusCode).toBe(200)
      }

      const ran = accountOnPostgres(['end-sessions', '--all'])
      expect(ran).toMatchObject({ status: 0, stdout: expect.stringMatching(/^ended \d+ session\(s\) of \d+ account\(s\) in PostgreSQL at .*: everyone logs in again; API keys still work \(their owners revoke any not to trust\)$/) as string })
      const [, sessions, accounts] = /^ended (\d+) session\(s\) of (\d+) account/.exec(ran.stdout) ?? []
      // At least these two accounts' three sessions (earlier cases' accounts may have some left).
      expect(Number(sessions)).toBeGreaterThanOrEqual(3)
      expect(Number(accounts)).toBeGreaterThanOrEqual(2)
      for (const app of [first, second]) {
        for (const headers of [asBrowser(owner), asBrowser(colleague), { cookie: secondCookie }]) {
          expect((await app.inject({ method: 'GET', url: '/api/v1/me', headers })).statusCode).toBe(401)
        }
        expect((await app.inject({ method: 'GET', url: '/api/v1/me', headers: asScript(owner) })).statusCode).toBe(200)
      }
      const audit = await first.inject({ method: 'GET', url: '/api/v1/audit-log?action=account.sessions_ended', headers: asScript(colleague) })
      expect(audit.json<{ items: { actor: { type: string }; details: object }[] }>().items).toMatchObject([{ actor: { type: 'operator' }, details: { endedSessions: 2 } }])
      expect(accountOnPostgres(['end-sessions', '--all']).stdout).toMatch(/^ended 0 session\(s\) of 0 account\(s\) in /)
      expect((await logInAs(first, colleague)).statusCode).toBe(200)
    })
  }, 180_000)

  it('deletes an account as DELETE /api/v1/me does, but not while it owns a site other members share', async () => {
    await withInstances(async (first) => {
      const leaver = await createTestAccount(first)
      const member = await createTestAccount(first)
      const shared = await createTestSite(first, leaver, { name: 'Client 01' })
      await createTestSite(first, leaver, { name: 'Her own' })
      await shareSite(first, leaver, member, shared.id, 'viewer')

      const refused = accountOnPostgres(['delete', leaver.email])
      expect(refused.status).toBe(1)
      expect(refused.stderr).toBe(
        `tollgate account: ${leaver.email} owns 1 site(s) shared with other members: Client 01. ` +
          "Its owner makes another member owner of each on the site's Members page first (or disable the account instead, which keeps the sites)",
      )
      expect((await first.inject({ method: 'GET', url: '/api/v1/me', headers: asScript(leaver) })).statusCode).toBe(200)

      const transferred = await first.inject({ method: 'POST', url: `/api/v1/sites/${shared.id}/transfer`, headers: asBrowser(leaver), payload: { accountId: member.id, password: leaver.password } })
      expect(transferred.statusCode, transferred.body).toBeLessThan(300)
      expect(accountOnPostgres(['delete', leaver.email])).toMatchObject({ status: 0, stdout: expect.stringMatching(/^deleted .* with its 1 site\(s\), sessions and API keys$/) as string })
      expect((await first.inject({ method: 'GET', url: '/api/v1/me', headers: asScript(leaver) })).statusCode).toBe(401)
      expect((await logInAs(first, leaver)).json().error.code).toBe('invalid_credentials')
      expect((await first.inject({ method: 'GET', url: `/api/v1/sites/${shared.id}`, headers: asScript(member) })).json().role).toBe('owner')
    })
  }, 180_000)
})

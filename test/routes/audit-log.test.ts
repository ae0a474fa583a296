import { setTimeout as delay } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, asScript, createTestAccount, createTestSite, OWN_ORIGIN, randomClientAddress, sessionCookieOf, type TestAccount } from '../helpers/dashboard-client.js'
import { MAX_REPEATED_VARIANTS, REPEATED_PERIOD_MS, repeatedHourOf } from '../../src/domain/audit/audit-actions.js'
import { OPERATOR_ACTOR } from '../../src/domain/audit/audit-event.js'
import { createAuditLogRepository } from '../../src/storage/sql/audit-log-repository.js'
import { changeWhileDeletingAccount } from '../helpers/account-row-race.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { type AuditEvent } from '../helpers/log-export.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

interface AuditPage {
  items: AuditEvent[]
  nextCursor: string | null
}

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36'
const WEBHOOK_SECRET = 'whsec-audit-test-0123456789abcdef'

/** The audit log records who changed what in an account, from where, in the change's own transaction. */
describe.each(deployments)('the audit log ($name)', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp(options)
    account = await createTestAccount(service.app)
  })
  afterAll(() => service?.close())

  const read = async (query = '', headers: Record<string, string> = asBrowser(account)) => {
    const response = await service.app.inject({ method: 'GET', url: `/api/v1/audit-log${query}`, headers })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<AuditPage>()
  }
  const latest = async (action: string, query = '') => (await read(`?action=${action}${query}`)).items[0]

  const asOwnBrowser = (address: string) => ({ headers: { ...asBrowser(account), 'user-agent': BROWSER }, remoteAddress: address })

  it.runIf(available)("records the sign-up, the log-in and the API key of a new account, each with its actor and address", async () => {
    const { items } = await read()
    expect(items.map((event) => event.action)).toEqual(['api_key.created', 'account.logged_in', 'account.created'])
    const [keyCreated, loggedIn, created] = items
    expect(created?.actor).toMatchObject({ type: 'anonymous', id: null, name: null, clientIp: expect.stringMatching(/^2001:db8:/) })
    expect(loggedIn?.actor).toMatchObject({ type: 'session', id: expect.any(String), name: account.email, clientIp: created?.actor.clientIp })
    expect(keyCreated?.actor).toMatchObject({ type: 'session', id: loggedIn?.actor.id, name: account.email, clientIp: created?.actor.clientIp })
    expect(keyCreated?.details).toEqual({ apiKeyId: expect.any(String), name: 'test key', prefix: expect.stringMatching(/^tgak_/), access: 'full', siteIds: null, allowedAddresses: null, expiresAt: null })
    expect(keyCreated?.site).toBeNull()
  })

  it.runIf(available)("names the API key that made a change, and a site's settings before and after, never its webhook secret", async () => {
    const site = await createTestSite(service.app, account, { name: 'Shop', domains: ['shop.example'] })
    const createdEvent = await latest('site.created')
    expect(createdEvent).toMatchObject({ site: { id: site.id, name: 'Shop' }, details: { domains: ['shop.example'], settings: [] } })
    expect(createdEvent?.actor).toMatchObject({ type: 'api-key', name: 'test key', keyPrefix: expect.stringMatching(/^tgak_/), clientIp: expect.any(String) })

    const address = randomClientAddress()
    const updated = await service.app.inject({
      method: 'PUT',
      url: `/api/v1/sites/${site.id}`,
      ...asOwnBrowser(address),
      payload: { name: 'Shop (EU)', settings: { blockThreshold: 60, webhookUrl: 'https://hooks.example/tollgate', webhookSecret: WEBHOOK_SECRET } },
    })
    expect(updated.statusCode, updated.body).toBe(200)
    const event = await latest('site.updated')
    expect(event?.site).toEqual({ id: site.id, name: 'Shop (EU)' })
    expect(event?.actor).toMatchObject({ type: 'session', name: account.email, clientIp: address, userAgent: BROWSER })
    expect(event?.details).toEqual({
      changes: [
        { field: 'name', from: 'Shop', to: 'Shop (EU)' },
        { field: 'webhookUrl', from: null, to: expect.stringMatching(/^https:\/\/hooks\.example\/… \([0-9a-f]{8}\)$/) },
        { field: 'blockThreshold', from: 70, to: 60 },
        { field: 'webhookSecret', from: false, to: true },
      ],
    })
    const everything = JSON.stringify(await read('?limit=200'))
    expect(everything).not.toContain(WEBHOOK_SECRET)
    expect(everything).not.toContain('/tollgate')

    // The secret replaced, then removed.
    await service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(account), payload: { settings: { webhookSecret: `${WEBHOOK_SECRET}-2` } } })
    expect((await latest('site.updated'))?.details).toEqual({
      changes: [
        { field: 'webhookSecret', from: true, to: true },
        { field: 'previousWebhookSecret', from: null, to: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      ],
    })
    await service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(account), payload: { settings: { webhookUrl: null, webhookSecret: null } } })
    expect((await latest('site.updated'))?.details).toEqual({
      changes: [
        { field: 'webhookUrl', from: expect.stringMatching(/^https:\/\/hooks\.example\/… /), to: null },
        { field: 'webhookSecret', from: true, to: false },
        { field: 'previousWebhookSecret', from: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), to: null },
      ],
    })
  })

  it.runIf(available)('records nothing for an update that changed nothing, was refused or lost a race', async () => {
    const site = await createTestSite(service.app, account, { name: 'Quiet' })
    const countOf = async () => (await read(`?siteId=${site.id}&action=site.updated`)).items.length
    const put = (payload: object, headers: Record<string, string> = asScript(account)) =>
      service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers, payload })
    expect((await put({ name: 'Quiet', settings: { blockThreshold: 70 } })).statusCode).toBe(200)
    // The merged settings are checked in the update's transaction: a threshold pair out of order rolls back.
    expect((await put({ settings: { challengeThreshold: 90, blockThreshold: 80 } })).statusCode).toBe(400)
    expect((await put({ name: 'Late' }, { ...asScript(account), 'if-match': '"999"' })).statusCode).toBe(412)
    expect(await countOf()).toBe(0)
    expect((await put({ settings: { maxStepUps: 3 } })).statusCode).toBe(200)
    expect(await countOf()).toBe(1)
  })

  it.runIf(available)('makes no change whose event cannot be written', async () => {
    const site = await createTestSite(service.app, account, { name: 'Guarded' })
    // The database refuses this one kind of event: the change it records must roll back with it.
    await service.app.database.query(`ALTER TABLE audit_events ADD CONSTRAINT refuse_updates CHECK (action <> 'site.updated') NOT VALID`)
    try {
      const refused = await service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(account), payload: { name: 'Changed' } })
      expect(refused.statusCode).toBe(500)
    } finally {
      await service.app.database.query('ALTER TABLE audit_events DROP CONSTRAINT refuse_updates')
    }
    const stored = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}`, headers: asScript(account) })
    expect(stored.json<{ name: string }>().name).toBe('Guarded')
  })

  it.runIf(available)('makes no API key whose event cannot be written', async () => {
    await service.app.database.query(`ALTER TABLE audit_events ADD CONSTRAINT refuse_keys CHECK (action <> 'api_key.created') NOT VALID`)
    try {
      const refused = await service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: asBrowser(account), payload: { name: 'unrecorded', password: account.password } })
      expect(refused.statusCode).toBe(500)
    } finally {
      await service.app.database.query('ALTER TABLE audit_events DROP CONSTRAINT refuse_keys')
    }
    const keys = await service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: asBrowser(account) })
    expect(keys.json<{ items: { name: string }[] }>().items.map((key) => key.name)).not.toContain('unrecorded')
  })

  it.runIf(available)("records concurrent updates of one site each against the one before it", async () => {
    const site = await createTestSite(service.app, account, { name: 'Busy' })
    const thresholds = [50, 55, 60, 65, 75, 80]
    const answers = await Promise.all(
      thresholds.map((blockThreshold) =>
        service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(account), payload: { settings: { blockThreshold } } }),
      ),
    )
    expect(answers.map((answer) => answer.statusCode)).toEqual(thresholds.map(() => 200))
    const changes = (await read(`?siteId=${site.id}&action=site.updated`)).items
      .reverse()
      .map((event) => (event.details.changes as { from: number; to: number }[])[0])
    expect(changes).toHaveLength(thresholds.length)
    // A chain from the default: each update's "before" is the "after" of the one that committed before it.
    expect(changes[0]?.from).toBe(70)
    for (let index = 1; index < changes.length; index += 1) expect(changes[index]?.from).toBe(changes[index - 1]?.to)
    const stored = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}`, headers: asScript(account) })
    expect(stored.json<{ settings: { blockThreshold: number } }>().settings.blockThreshold).toBe(changes.at(-1)?.to)
  })

  it.runIf(available && options.database === 'postgres')("waits for an account's deletion under way instead of deadlocking with it", async () => {
    const owner = await createTestAccount(service.app)
    const site = await createTestSite(service.app, owner, { name: 'Caught' })
    const answer = await changeWhileDeletingAccount(service.app, owner.id, () =>
      service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(owner), payload: { settings: { blockThreshold: 60 } } }),
    )
    expect(answer.statusCode, answer.body).toBe(401)
  })

  it.runIf(available)("answers changes racing the account's deletion without a server error", async () => {
    for (let round = 0; round < 5; round += 1) {
      const owner = await createTestAccount(service.app)
      const site = await createTestSite(service.app, owner, { name: 'Racing' })
      const [update, rotate, revoke, deletion] = await Promise.all([
        service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(owner), payload: { settings: { blockThreshold: 60 } } }),
        service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/secret/rotate`, headers: asBrowser(owner) }),
        service.app.inject({ method: 'DELETE', url: '/api/v1/sessions/others', headers: asBrowser(owner) }),
        service.app.inject({ method: 'DELETE', url: '/api/v1/me', headers: asBrowser(owner), payload: { password: owner.password } }),
      ])
      expect(deletion.statusCode, deletion.body).toBe(204)
      for (const answer of [update, rotate, revoke]) expect([200, 401, 404], answer.body).toContain(answer.statusCode)
    }
  })

  it.runIf(available)("counts attempts written at once, an hour's first, in the hour's one event", async () => {
    const owner = await createTestAccount(service.app)
    const [first = '', ...others] = Array.from({ length: 10 }, () => randomClientAddress())
    const hourStart = repeatedHourOf(Date.now())
    const attemptFrom = (clientIp: string) => ({ accountId: owner.id, action: 'account.login_failed' as const, actor: { ...OPERATOR_ACTOR, type: 'anonymous' as const, clientIp, userAgent: BROWSER } })
    // Wrong passwords from ten machines: the hour's first is written and not committed yet while
    // the nine others are (on PostgreSQL, over as many connections; the embedded database takes them in turn).
    let written!: () => void
    const firstWritten = new Promise<void>((resolve) => (written = resolve))
    const firstCommitted = service.app.database.transaction(async (transaction) => {
      await createAuditLogRepository(transaction).recordRepeated(attemptFrom(first), hourStart)
      written()
      await delay(300)
    })
    await firstWritten
    const repository = createAuditLogRepository(service.app.database)
    await Promise.all([firstCommitted, ...others.map((clientIp) => repository.recordRepeated(attemptFrom(clientIp), hourStart))])

    const events = (await read('?action=account.login_failed', asBrowser(owner))).items
    expect(events.map((event) => event.details.count)).toEqual([10])
    // The first attempt's address first, the others' in the order they were counted.
    expect(events[0]?.details).toEqual({ count: 10, firstAt: expect.any(String), addresses: expect.arrayContaining([first, ...others]) })
    expect(events[0]?.details.addresses).toHaveLength(10)
    expect((events[0]?.details.addresses as string[])[0]).toBe(first)
  })

  it.runIf(available)("lists every distinct detail of an hour's repeated attempts, so a later one is not hidden behind the first", async () => {
    const owner = await createTestAccount(service.app)
    const repository = createAuditLogRepository(service.app.database)
    const hourStart = repeatedHourOf(Date.now())
    const refusal = (details: Record<string, unknown>) =>
      repository.recordRepeated({ accountId: owner.id, action: 'account.passkey_refused', actor: { ...OPERATOR_ACTOR, type: 'anonymous', clientIp: '198.51.100.7', userAgent: BROWSER }, details }, hourStart)
    const junk = { reason: 'signature', passkeyId: 'p', passkey: 'Phone' }
    const counter = { reason: 'counter', passkeyId: 'p', passkey: 'Phone' }
    const laptop = { reason: 'signature', passkeyId: 'l', passkey: 'Laptop' }
    // Junk signatures anyone who knows the credential id can send, then the copied authenticator's counter.
    for (const details of [junk, junk, counter, laptop, counter, junk]) await refusal(details)
    const [event, ...others] = (await read('?action=account.passkey_refused', asBrowser(owner))).items
    expect(others).toEqual([])
    // The first attempt's details stay at the top, as before the variants were kept.
    expect(event?.details).toEqual({ ...junk, count: 6, firstAt: expect.any(String), addresses: ['198.51.100.7'], variants: [junk, counter, laptop] })

    // Not beyond MAX_REPEATED_VARIANTS, however many the attempts name.
    for (let index = 0; index < MAX_REPEATED_VARIANTS + 5; index += 1) await refusal({ reason: 'signature', passkeyId: `p${index}`, passkey: 'Phone' })
    const variants = (await read('?action=account.passkey_refused', asBrowser(owner))).items[0]?.details.variants as unknown[]
    expect(variants).toHaveLength(MAX_REPEATED_VARIANTS)
    expect(variants.slice(0, 4)).toEqual([junk, counter, laptop, { reason: 'signature', passkeyId: 'p0', passkey: 'Phone' }])

    // An hour's event recorded before variants were kept: its own details are the first variant.
    await service.app.database.query(`UPDATE audit_events SET details = details - 'variants' WHERE account_id = $1`, [owner.id])
    await refusal(junk)
    await refusal(counter)
    expect((await read('?action=account.passkey_refused', asBrowser(owner))).items[0]?.details).toEqual({
      ...junk,
      count: MAX_REPEATED_VARIANTS + 13,
      firstAt: expect.any(String),
      addresses: ['198.51.100.7'],
      variants: [junk, counter],
    })
  })

  it.runIf(available)("writes a repeated attempt's firstAt in UTC with milliseconds, whatever the session's time zone", async () => {
    const owner = await createTestAccount(service.app)
    const attempt = { accountId: owner.id, action: 'account.login_failed' as const, actor: { ...OPERATOR_ACTOR, type: 'anonymous' as const, clientIp: randomClientAddress(), userAgent: BROWSER } }
    const before = Date.now()
    await service.app.database.transaction(async (transaction) => {
      await transaction.query("SET LOCAL timezone = 'Asia/Kolkata'")
      await createAuditLogRepository(transaction).recordRepeated(attempt, repeatedHourOf(Date.now()))
    })
    const firstAt = String((await read('?action=account.login_failed', asBrowser(owner))).items[0]?.details.firstAt)
    expect(firstAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    // Within the write's time, allowing for the clocks' (the database's and ours) millisecond.
    expect(Date.parse(firstAt)).toBeGreaterThanOrEqual(before - 1_000)
    expect(Date.parse(firstAt)).toBeLessThanOrEqual(Date.now() + 1_000)
  })

  it.runIf(available)('reads a firstAt written before, in the session\'s zone with microseconds, as UTC with milliseconds', async () => {
    const owner = await createTestAccount(service.app)
    const actor = { ...OPERATOR_ACTOR, type: 'anonymous' as const, clientIp: randomClientAddress(), userAgent: BROWSER }
    await createAuditLogRepository(service.app.database).record({ accountId: owner.id, action: 'account.login_failed', actor, details: { count: 2, firstAt: '2026-12-01T06:15:14.582463+05:30', addresses: [actor.clientIp] } })
    expect((await read('?action=account.login_failed', asBrowser(owner))).items[0]?.details.firstAt).toBe('2026-12-01T00:45:14.582Z')
  })

  it.runIf(available)('records a repeated attempt at an account deleted meanwhile as nothing, without an error', async () => {
    const owner = await createTestAccount(service.app)
    expect((await service.app.inject({ method: 'DELETE', url: '/api/v1/me', headers: asBrowser(owner), payload: { password: owner.password } })).statusCode).toBe(204)
    const repository = createAuditLogRepository(service.app.database)
    await repository.recordRepeated({ accountId: owner.id, action: 'account.two_factor_failed', actor: OPERATOR_ACTOR }, new Date())
    expect(await service.app.database.query('SELECT 1 FROM audit_events WHERE account_id = $1', [owner.id])).toHaveLength(0)
  })

  it.runIf(available && options.database === 'postgres')("records nothing, and answers as without it, for a wrong password whose account is deleted while it is recorded", async () => {
    const owner = await createTestAccount(service.app)
    const guess = () => service.app.inject({ method: 'DELETE', url: '/api/v1/me', headers: asBrowser(owner), payload: { password: 'a guess at it' } })
    // The hour's event is there already: the next guess would count in it.
    expect((await guess()).statusCode).toBe(400)
    const answer = await changeWhileDeletingAccount(service.app, owner.id, guess, '%FROM accounts WHERE id = $2 FOR KEY SHARE%')
    expect(answer.statusCode, answer.body).toBe(400)
    expect(await service.app.database.query('SELECT 1 FROM audit_events WHERE account_id = $1', [owner.id])).toHaveLength(0)
  })

  it.runIf(available)("keeps a deleted site's events, found by its id, with the keys' rotations and the key's revocation", async () => {
    const site = await createTestSite(service.app, account, { name: 'Gone soon' })
    const rotate = (payload?: object) =>
      service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/secret/rotate`, headers: asScript(account), ...(payload === undefined ? {} : { payload }) })
    expect((await rotate()).statusCode).toBe(200)
    expect((await latest('site.secret_rotated'))?.details).toEqual({ previousSecretExpiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })
    expect((await rotate({ invalidateImmediately: true })).statusCode).toBe(200)
    expect((await latest('site.secret_rotated'))?.details).toEqual({ previousSecretExpiresAt: null })
    const ended = await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}/secret/previous`, headers: asScript(account) })
    expect(ended.statusCode).toBe(204)
    expect(await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}`, headers: asScript(account) })).toMatchObject({ statusCode: 204 })

    const { items } = await read(`?siteId=${site.id.toUpperCase()}`)
    expect(items.map((event) => event.action)).toEqual(['site.deleted', 'site.previous_secrets_ended', 'site.secret_rotated', 'site.secret_rotated', 'site.created'])
    expect(items.every((event) => event.site?.name === 'Gone soon')).toBe(true)

    const made = await service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: asBrowser(account), payload: { name: 'deploy', password: account.password } })
    const key = made.json<{ id: string; prefix: string; key: string }>()
    // The key revokes itself: the event names it as the actor and as what was revoked.
    const revoked = await service.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${key.id}`, headers: { authorization: `Bearer ${key.key}` } })
    expect(revoked.statusCode).toBe(204)
    expect(await latest('api_key.revoked')).toMatchObject({
      actor: { type: 'api-key', id: key.id, name: 'deploy', keyPrefix: key.prefix, accountId: account.id, email: account.email },
      details: { apiKeyId: key.id, name: 'deploy', prefix: key.prefix },
    })
  })

  it.runIf(available)("records failed log-ins, a password change and ended sessions, and shows addresses to the dashboard only", async () => {
    const owner = await createTestAccount(service.app)
    const attacker = randomClientAddress()
    // Wrong passwords are counted by the UTC hour: the three below fall in one.
    await startWithinOneWindow(REPEATED_PERIOD_MS, 10_000)
    const wrong = await service.app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: owner.email, password: 'not-the-password' }, remoteAddress: attacker })
    expect(wrong.statusCode).toBe(401)
    const readOwner = (query: string, headers: Record<string, string> = asBrowser(owner)) => read(query, headers)
    // The failed log-in is written beside the answer, not before it.
    await expect.poll(async () => (await readOwner('?action=account.login_failed')).items[0]?.actor).toMatchObject({ type: 'anonymous', clientIp: attacker })
    // More wrong passwords within the hour, from another machine: the same event, counted.
    const accomplice = randomClientAddress()
    for (const remoteAddress of [accomplice, attacker]) {
      await service.app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: owner.email, password: 'still-not-it' }, remoteAddress })
    }
    await expect.poll(async () => (await readOwner('?action=account.login_failed')).items[0]?.details.count).toBe(3)
    const failures = (await readOwner('?action=account.login_failed')).items
    expect(failures).toHaveLength(1)
    expect(failures[0]?.details).toEqual({ count: 3, firstAt: expect.any(String), addresses: [attacker, accomplice] })
    expect(failures[0]?.actor.clientIp).toBe(attacker)

    const second = await service.app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: owner.email, password: owner.password }, remoteAddress: attacker })
    const secondCookie = sessionCookieOf(second.headers['set-cookie'])
    const secondId = (await readOwner('?action=account.logged_in')).items[0]?.actor.id
    const endOne = await service.app.inject({ method: 'DELETE', url: `/api/v1/sessions/${String(secondId)}`, headers: asBrowser(owner) })
    expect(endOne.statusCode).toBe(204)
    expect((await readOwner('?action=session.ended')).items[0]?.details).toEqual({ sessionId: secondId })
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: { cookie: secondCookie } })).statusCode).toBe(401)

    const changed = await service.app.inject({
      method: 'PUT',
      url: '/api/v1/me/password',
      headers: asBrowser(owner),
      payload: { currentPassword: owner.password, newPassword: `${owner.password}-new` },
    })
    expect(changed.statusCode).toBe(204)
    expect((await readOwner('?action=account.password_changed')).items[0]).toMatchObject({ actor: { type: 'session', name: owner.email }, details: { endedSessions: 0 } })
    // A session that does not know the password it needs to delete the account shows itself.
    const guessed = await service.app.inject({ method: 'DELETE', url: '/api/v1/me', headers: asBrowser(owner), payload: { password: 'a guess at it' } })
    expect(guessed.statusCode).toBe(400)
    expect((await readOwner('?action=account.password_check_failed')).items[0]).toMatchObject({ actor: { type: 'session', name: owner.email }, details: { count: 1 } })

    const byScript = await readOwner('', asScript(owner))
    expect(byScript.items.length).toBeGreaterThan(4)
    expect(byScript.items.every((event) => event.actor.clientIp === null && event.actor.userAgent === null)).toBe(true)
    expect(JSON.stringify(byScript)).not.toContain(attacker)
    expect(byScript.items.find((event) => event.action === 'account.login_failed')?.details).toEqual({ count: 3, firstAt: expect.any(String) })

    const loggedOut = await service.app.inject({ method: 'DELETE', url: '/api/v1/sessions', headers: asBrowser(owner) })
    expect(loggedOut.statusCode).toBe(204)
    expect((await readOwner('?action=account.logged_out', asScript(owner))).items[0]?.actor).toMatchObject({ type: 'session', name: owner.email })
    // Another account sees none of this one's events, not even through the id of one of its sites.
    const mine = await read('?limit=200')
    expect(mine.items.some((event) => event.actor.name === owner.email || event.actor.clientIp === attacker)).toBe(false)
    const ownersSite = await createTestSite(service.app, owner, { name: "The owner's" })
    expect((await read(`?siteId=${ownersSite.id}`)).items).toEqual([])
    expect((await read(`?siteId=${ownersSite.id}`, asScript(account))).items).toEqual([])
  })

  it.runIf(available)('pages through every event once, newest first, and refuses what it cannot read', async () => {
    const all = (await read('?limit=200')).items
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: AuditPage = await read(`?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`)
      seen.push(...page.items.map((event) => event.id))
      cursor = page.nextCursor
    } while (cursor !== null)
    expect(seen).toEqual(all.map((event) => event.id))
    const times = all.map((event) => Date.parse(event.createdAt))
    expect(times).toEqual([...times].sort((first, second) => second - first))

    for (const query of ['?siteId=not-a-site', '?action=site.renamed', '?cursor=forged', '?limit=0']) {
      const response = await service.app.inject({ method: 'GET', url: `/api/v1/audit-log${query}`, headers: asBrowser(account) })
      expect(response.statusCode, query).toBe(400)
      expect(response.json<{ error: { code: string } }>().error.code).toBe('validation_error')
    }
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/audit-log' })).statusCode).toBe(401)
  })

  it.runIf(available)("refuses a parameter it does not take, naming it, rather than answer the whole log: ?site= is the dashboard page's, the API's is siteId", async () => {
    const site = await createTestSite(service.app, account, { name: 'Filtered' })
    const response = await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?site=${site.id}&action=site.created`, headers: asBrowser(account) })
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json().error).toMatchObject({ code: 'validation_error', details: [{ field: 'querystring.site', message: 'is not a parameter of this route' }] })
    expect((await read(`?siteId=${site.id}&action=site.created`)).items.map((event) => event.site?.id)).toEqual([site.id])
  })

  it.runIf(available)('deletes events past AUDIT_RETENTION_DAYS', async () => {
    const before = (await read('?limit=200')).items.length
    expect(before).toBeGreaterThan(0)
    // A sweep a day short of the retention keeps them; one past it deletes them.
    await service.app.logRetention.sweep(new Date(Date.now() + 364 * 86_400_000))
    expect((await read('?limit=200')).items.length).toBe(before)
    await service.app.logRetention.sweep(new Date(Date.now() + 366 * 86_400_000))
    expect((await read('?limit=200')).items).toEqual([])
  })
})

describe('the audit log with AUDIT_RETENTION_DAYS=0', () => {
  it('keeps events for ever', { timeout: 90_000 }, async () => {
    const service = await buildTestApp({ env: { AUDIT_RETENTION_DAYS: '0' } })
    try {
      const account = await createTestAccount(service.app, { origin: OWN_ORIGIN })
      await service.app.logRetention.sweep(new Date(Date.now() + 100 * 365 * 86_400_000))
      const page = await service.app.inject({ method: 'GET', url: '/api/v1/audit-log', headers: asBrowser(account) })
      expect(page.json<AuditPage>().items).toHaveLength(3)
    } finally {
      await service.close()
    }
  })
})

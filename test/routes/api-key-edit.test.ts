import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { createKey, errorOf, withKey, type CreatedKey } from '../helpers/api-keys.js'
import { asBrowser, createTestAccount, createTestSite, randomClientAddress, type TestAccount } from '../helpers/dashboard-client.js'
import { shareSite, useAppWithOwner } from '../helpers/site-sharing.js'
import { deployments, type TestApp } from '../helpers/test-app.js'

interface AuditEvent {
  action: string
  actor: { type: string; name: string | null }
  details: { apiKeyId: string; name: string; prefix: string; changes: { field: string; from: unknown; to: unknown }[] }
}

/** PATCH /api/v1/api-keys/{id}: a key's name, access, sites and expiry change, its secret stays. */
describe.each(deployments)('editing an API key on $name', (deployment) => {
  const { available } = deployment
  const suite = useAppWithOwner(deployment)
  let service: TestApp
  let account: TestAccount
  beforeAll(() => {
    if (available) ({ service, owner: account } = suite)
  })

  /** The edit as the owner's browser (a logged-in session). */
  const editAsSession = (owner: TestAccount, id: string, payload: object) =>
    service.app.inject({ method: 'PATCH', url: `/api/v1/api-keys/${id}`, headers: asBrowser(owner), payload, remoteAddress: randomClientAddress() })
  const editWithKey = (key: string, id: string, payload: object) => withKey(service.app, 'PATCH', `/api/v1/api-keys/${id}`, key, payload)
  const siteStatus = async (key: string, siteId: string) => (await withKey(service.app, 'GET', `/api/v1/sites/${siteId}`, key)).statusCode
  const listed = async (owner: TestAccount, id: string) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: asBrowser(owner) })).json<{ items: CreatedKey[] }>().items.find((key) => key.id === id)
  const updates = async (owner: TestAccount, id: string) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/audit-log?action=api_key.updated', headers: asBrowser(owner) }))
      .json<{ items: AuditEvent[] }>()
      .items.filter((event) => event.details.apiKeyId === id)

  it.skipIf(!available)('renames a key without the password; the key keeps working, and the rename is audited', async () => {
    const key = await createKey(service.app, account, { name: 'deploy' })
    const renamed = await editAsSession(account, key.id, { name: '  deploy shop ' })
    expect(renamed.statusCode, renamed.body).toBe(200)
    expect(renamed.json()).toMatchObject({ id: key.id, name: 'deploy shop', access: 'full', siteIds: null, expiresAt: null })
    expect(await listed(account, key.id)).toMatchObject({ name: 'deploy shop' })
    expect((await withKey(service.app, 'GET', '/api/v1/me', key.key)).statusCode).toBe(200)

    const [event, ...others] = await updates(account, key.id)
    expect(others).toEqual([])
    expect(event).toMatchObject({
      actor: { type: 'session' },
      details: { name: 'deploy shop', prefix: key.key.slice(0, 12), changes: [{ field: 'name', from: 'deploy', to: 'deploy shop' }] },
    })
    // The same name again changes nothing, and writes nothing.
    expect((await editAsSession(account, key.id, { name: 'deploy shop' })).statusCode).toBe(200)
    expect(await updates(account, key.id)).toHaveLength(1)
  })

  it.skipIf(!available)('narrows a key: the removed site is refused at its next request, by the key itself too', async () => {
    const kept = await createTestSite(service.app, account, { name: 'Kept' })
    const removed = await createTestSite(service.app, account, { name: 'Removed' })
    const key = await createKey(service.app, account, { name: 'two sites', siteIds: [kept.id, removed.id] })
    expect(await siteStatus(key.key, removed.id)).toBe(200)

    const narrowed = await editAsSession(account, key.id, { siteIds: [kept.id] })
    expect(narrowed.statusCode, narrowed.body).toBe(200)
    expect(narrowed.json()).toMatchObject({ siteIds: [kept.id] })
    expect(await siteStatus(key.key, removed.id)).toBe(404)
    expect(await siteStatus(key.key, kept.id)).toBe(200)
    expect((await updates(account, key.id))[0]?.details.changes).toEqual([{ field: 'siteIds', from: [kept.id, removed.id], to: [kept.id] }])

    // A key narrows itself without a password, an expiry sooner included, and is named as the actor.
    const everywhere = await createKey(service.app, account, { name: 'everywhere', expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString() })
    const soon = new Date(Date.now() + 86_400_000).toISOString()
    const itself = await editWithKey(everywhere.key, everywhere.id, { siteIds: [kept.id], expiresAt: soon, access: 'read' })
    expect(itself.statusCode, itself.body).toBe(200)
    expect(itself.json()).toMatchObject({ siteIds: [kept.id], access: 'read', expiresAt: soon })
    expect(await siteStatus(everywhere.key, removed.id)).toBe(404)
    expect((await withKey(service.app, 'DELETE', `/api/v1/api-keys/${key.id}`, everywhere.key)).statusCode).toBe(403)
    expect((await updates(account, everywhere.id))[0]?.actor).toMatchObject({ type: 'api-key', name: 'everywhere' })
  })

  it.skipIf(!available)("widens a key to a site shared with its account, with the password; not without it", async () => {
    const member = await createTestAccount(service.app)
    const own = await createTestSite(service.app, member, { name: "Member's own" })
    const shared = await createTestSite(service.app, account, { name: 'Shared with the member' })
    await shareSite(service.app, account, member, shared.id, 'viewer')
    const key = await createKey(service.app, member, { name: 'member ci', siteIds: [own.id] })
    expect(await siteStatus(key.key, shared.id)).toBe(404)

    const unconfirmed = await editAsSession(member, key.id, { siteIds: [own.id, shared.id] })
    expect(unconfirmed.statusCode).toBe(400)
    expect(errorOf(unconfirmed)).toMatchObject({ code: 'validation_error', details: [{ field: 'password' }] })
    const wrong = await editAsSession(member, key.id, { siteIds: [own.id, shared.id], password: 'not the password' })
    expect(wrong.statusCode, wrong.body).toBe(400)
    expect(errorOf(wrong).details?.[0]?.field).toBe('password')
    expect(await siteStatus(key.key, shared.id)).toBe(404)

    const widened = await editAsSession(member, key.id, { siteIds: [own.id, shared.id], password: member.password })
    expect(widened.statusCode, widened.body).toBe(200)
    expect(widened.json()).toMatchObject({ siteIds: [own.id, shared.id] })
    expect(await siteStatus(key.key, shared.id)).toBe(200)
    const all = await editAsSession(member, key.id, { siteIds: null, password: member.password })
    expect(all.json()).toMatchObject({ siteIds: null })
  })

  it.skipIf(!available)('refuses a widening asked with an API key, the key itself included (403 api_key_widening_forbidden)', async () => {
    const site = await createTestSite(service.app, account, { name: 'Narrow' })
    const other = await createTestSite(service.app, account, { name: 'Out of reach' })
    const expiresAt = new Date(Date.now() + 7 * 86_400_000).toISOString()
    const key = await createKey(service.app, account, { name: 'narrow', siteIds: [site.id], expiresAt })
    const readKey = await createKey(service.app, account, { name: 'reader', access: 'read' })
    for (const [editor, body] of [
      [key.key, { siteIds: [site.id, other.id] }],
      [key.key, { siteIds: null, password: account.password }],
      [key.key, { expiresAt: null }],
      [key.key, { expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString() }],
      // A key for all sites may not widen another one either: revoking it would leave the wider key behind.
      [account.apiKey, { siteIds: [site.id, other.id] }],
      [account.apiKey, { access: 'full' }],
    ] as const) {
      const id = editor === account.apiKey && 'access' in body ? readKey.id : key.id
      const refused = await editWithKey(editor, id, body)
      expect(refused.statusCode, JSON.stringify(body)).toBe(403)
      expect(errorOf(refused).code).toBe('api_key_widening_forbidden')
    }
    expect(await siteStatus(key.key, other.id)).toBe(404)
    expect(await listed(account, key.id)).toMatchObject({ siteIds: [site.id], expiresAt })
    expect(await listed(account, readKey.id)).toMatchObject({ access: 'read' })
    expect(await updates(account, key.id)).toEqual([])
  })

  it.skipIf(!available)("answers a key asking for a site it does not reach alike whether the account reaches that site or not", async () => {
    const reached = await createTestSite(service.app, account, { name: 'Reached' })
    const existing = await createTestSite(service.app, account, { name: 'Existing' })
    const key = await createKey(service.app, account, { name: 'probe', siteIds: [reached.id] })
    const answers = []
    for (const probed of [existing.id, randomUUID(), 'not-an-id']) {
      const refused = await editWithKey(key.key, key.id, { siteIds: [reached.id, probed] })
      expect(refused.statusCode, probed).toBe(403)
      // All of the error but its requestId, which differs per request.
      const { code, message, details } = errorOf(refused)
      answers.push({ code, message, details })
    }
    // The same body, word for word, whichever id it named: the key learns nothing of the account's sites.
    expect(answers[1]).toEqual(answers[0])
    expect(answers[2]).toEqual(answers[0])
    // Its own site, in capitals and twice, is no widening: the ids are compared as stored.
    const same = await editWithKey(key.key, key.id, { siteIds: [reached.id.toUpperCase(), reached.id] })
    expect(same.statusCode, same.body).toBe(200)
    expect(same.json()).toMatchObject({ siteIds: [reached.id] })
    expect(await updates(account, key.id)).toEqual([])
  })

  it.skipIf(!available)('refuses a site the account has no part in, or no site at all (400 api_key_site_not_found), changing nothing', async () => {
    const stranger = await createTestAccount(service.app)
    const foreign = await createTestSite(service.app, stranger, { name: "A stranger's" })
    const mine = await createTestSite(service.app, account, { name: 'Mine' })
    const key = await createKey(service.app, account, { name: 'mine only', siteIds: [mine.id] })
    for (const siteIds of [[mine.id, foreign.id], [randomUUID()], ['not-an-id']]) {
      const refused = await editAsSession(account, key.id, { siteIds, password: account.password })
      expect(refused.statusCode, JSON.stringify(siteIds)).toBe(400)
      expect(errorOf(refused).code).toBe('api_key_site_not_found')
    }
    // A member cannot give its key a site of the owner's that is not shared with it.
    const member = await createTestAccount(service.app)
    const memberKey = await createKey(service.app, member, { name: 'member' , siteIds: [await createTestSite(service.app, member, { name: 'M' }).then((site) => site.id)] })
    const notShared = await editAsSession(member, memberKey.id, { siteIds: [mine.id], password: member.password })
    expect(errorOf(notShared).code).toBe('api_key_site_not_found')
    for (const body of [{ siteIds: [] }, { name: ' ' }, { expiresAt: '2001-01-01T00:00:00Z' }, { prefix: 'x' }]) {
      const invalid = await editAsSession(account, key.id, body)
      expect(invalid.statusCode, JSON.stringify(body)).toBe(400)
      expect(errorOf(invalid).code).toBe('validation_error')
    }
    expect(await listed(account, key.id)).toMatchObject({ name: 'mine only', siteIds: [mine.id] })
  })

  it.skipIf(!available)("cannot edit an expired key (409 api_key_expired), a revoked one or another account's (404)", async () => {
    const key = await createKey(service.app, account, { name: 'expiring', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })
    await service.app.database.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [key.id])
    for (const body of [{ name: 'revived' }, { expiresAt: null, password: account.password }]) {
      const refused = await editAsSession(account, key.id, body)
      expect(refused.statusCode, JSON.stringify(body)).toBe(409)
      expect(errorOf(refused).code).toBe('api_key_expired')
    }
    expect((await withKey(service.app, 'GET', '/api/v1/me', key.key)).statusCode).toBe(401)

    const revoked = await createKey(service.app, account, { name: 'revoked' })
    expect((await service.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${revoked.id}`, headers: asBrowser(account) })).statusCode).toBe(204)
    const gone = await editAsSession(account, revoked.id, { name: 'back' })
    expect(gone.statusCode).toBe(404)
    expect(errorOf(gone).code).toBe('not_found')

    const stranger = await createTestAccount(service.app)
    const theirs = await createKey(service.app, stranger, { name: 'theirs' })
    expect((await editAsSession(account, theirs.id, { name: 'mine now' })).statusCode).toBe(404)
    expect((await editWithKey(account.apiKey, theirs.id, { name: 'mine now' })).statusCode).toBe(404)
    expect(await listed(stranger, theirs.id)).toMatchObject({ name: 'theirs' })
    expect((await editAsSession(account, 'not-a-uuid', { name: 'x' })).statusCode).toBe(404)
  })

  it.skipIf(!available)('lets a key for some sites edit itself only (any other key is a 404), and a read key none (403)', async () => {
    const site = await createTestSite(service.app, account, { name: 'Own only' })
    const restricted = await createKey(service.app, account, { name: 'restricted', siteIds: [site.id] })
    const other = await createKey(service.app, account, { name: 'other' })
    const hidden = await editWithKey(restricted.key, other.id, { name: 'renamed by another' })
    expect(hidden.statusCode).toBe(404)
    expect((await editWithKey(restricted.key, restricted.id, { name: 'renamed by itself' })).statusCode).toBe(200)
    const reader = await createKey(service.app, account, { name: 'reader', access: 'read' })
    const readOnly = await editWithKey(reader.key, reader.id, { name: 'renamed' })
    expect(readOnly.statusCode).toBe(403)
    expect(errorOf(readOnly).code).toBe('forbidden')
    expect(await listed(account, other.id)).toMatchObject({ name: 'other' })
  })
})

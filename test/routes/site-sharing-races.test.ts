import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { acceptInvitation, addFillerMembers, inviteTo, shareSite } from '../helpers/site-sharing.js'
import { hasPostgres, hasRedis } from '../helpers/services.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { pauseTransactionAt, waitUntilBlockedBy } from '../helpers/transaction-pause.js'

/**
 * Changes of a shared site racing each other, each race set up in one order by pausing a
 * request's transaction at one statement. PostgreSQL only: the embedded database runs one
 * transaction at a time, so none of these races can happen there.
 */
describe.runIf(hasPostgres && hasRedis)('races of a shared site, on PostgreSQL', () => {
  let service: TestApp
  let owner: TestAccount
  beforeAll(async () => {
    service = await buildTestApp({ database: 'postgres', keyValue: 'redis' })
    owner = await createTestAccount(service.app)
  })
  afterAll(() => service.close())

  const rowsOf = async (table: string, siteId: string) =>
    (await service.app.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE site_id = $1`, [siteId]))[0]?.n
  const deleteSite = (siteId: string) => service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${siteId}`, headers: asScript(owner) })
  const invite = (account: TestAccount, siteId: string) =>
    service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/invitations`, headers: asBrowser(account), payload: { role: 'viewer' } })
  const preview = (account: TestAccount, token: string) =>
    service.app.inject({ method: 'POST', url: '/api/v1/invitations/preview', headers: asBrowser(account), payload: { token } })

  it('lets an acceptance and the site\'s deletion wait for each other, not deadlock: both answer, and nothing of the site is left', async () => {
    const site = await createTestSite(service.app, owner, { name: 'Joined, then gone' })
    const invitee = await createTestAccount(service.app)
    const invitation = await inviteTo(service.app, owner, site.id, { role: 'viewer' })
    // The acceptance has read (and locked) the invitation and is about to add the member...
    const pause = pauseTransactionAt(service.app, /INSERT INTO site_members/)
    const accepting = acceptInvitation(service.app, invitee, invitation.token)
    const acceptor = await pause.reached
    // ...when the owner deletes the site, which must wait for it rather than take the site first.
    const deleting = deleteSite(site.id)
    await waitUntilBlockedBy(service.app, acceptor, '%sites WHERE id = $1%')
    pause.resume()
    const [accepted, deleted] = await Promise.all([accepting, deleting])

    expect(accepted.statusCode, accepted.body).toBe(201)
    expect(accepted.json()).toMatchObject({ id: site.id, role: 'viewer' })
    expect(deleted.statusCode, deleted.body).toBe(204)
    expect(await rowsOf('site_members', site.id)).toBe(0)
    expect(await rowsOf('site_invitations', site.id)).toBe(0)
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asBrowser(invitee) })).json().items).toEqual([])
    const log = (await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?siteId=${site.id}`, headers: asBrowser(owner) })).json<{ items: { action: string }[] }>()
    expect(log.items.slice(0, 2).map((event) => event.action)).toEqual(['site.deleted', 'site.member_joined'])
  })

  it('answers 404, not a server error, to an invitation made for a site deleted after the request found it', async () => {
    const site = await createTestSite(service.app, owner, { name: 'Gone before the invitation' })
    const pause = pauseTransactionAt(service.app, /FROM accounts WHERE id = \$1 FOR KEY SHARE/)
    const inviting = invite(owner, site.id)
    await pause.reached
    expect((await deleteSite(site.id)).statusCode).toBe(204)
    pause.resume()
    const answer = await inviting
    expect(answer.statusCode, answer.body).toBe(404)
    expect(answer.json().error.code).toBe('not_found')
  })

  it("revokes an admin's invitation made while the admin was being removed: no link outlives its inviter's membership", async () => {
    const site = await createTestSite(service.app, owner, { name: 'Removal under way' })
    const admin = await createTestAccount(service.app)
    await shareSite(service.app, owner, admin, site.id, 'admin')
    // The admin's request passed its check of the role and is about to insert the invitation...
    const pause = pauseTransactionAt(service.app, /INSERT INTO site_invitations/)
    const inviting = invite(admin, site.id)
    const inviter = await pause.reached
    // ...when the owner removes the admin: the removal waits for it, or (were the role not held
    // for the change) would commit first and miss the invitation.
    const removing = service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}/members/${admin.id}`, headers: asBrowser(owner) })
    await Promise.race([removing, waitUntilBlockedBy(service.app, inviter, '%FROM sites WHERE id = $1%').catch(() => undefined)])
    pause.resume()
    const [invited, removed] = await Promise.all([inviting, removing])

    expect(removed.statusCode, removed.body).toBe(204)
    expect(invited.statusCode, invited.body).toBe(201)
    const stranger = await createTestAccount(service.app)
    expect((await preview(stranger, invited.json<{ token: string }>().token)).statusCode).toBe(404)
    expect(await rowsOf('site_invitations', site.id)).toBe(0)
  })

  it('refuses the change of an admin removed or made a viewer while the change waited: 404 and 403, nothing changed', async () => {
    const site = await createTestSite(service.app, owner, { name: 'Role changing' })
    const [removedAdmin, demotedAdmin] = [await createTestAccount(service.app), await createTestAccount(service.app)]
    await shareSite(service.app, owner, removedAdmin, site.id, 'admin')
    await shareSite(service.app, owner, demotedAdmin, site.id, 'admin')

    for (const { admin, change, status, statement } of [
      { admin: removedAdmin, change: { method: 'DELETE' as const }, status: 404, statement: /DELETE FROM site_members/ },
      { admin: demotedAdmin, change: { method: 'PUT' as const, payload: { role: 'viewer' } }, status: 403, statement: /UPDATE site_members/ },
    ]) {
      // The owner's change of the admin holds the site and is about to write the membership...
      const pause = pauseTransactionAt(service.app, statement)
      const changing = service.app.inject({ url: `/api/v1/sites/${site.id}/members/${admin.id}`, headers: asBrowser(owner), ...change })
      const changer = await pause.reached
      // ...when the admin, still one a moment ago, invites and rotates the secret key.
      const inviting = invite(admin, site.id)
      const rotating = service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/secret/rotate`, headers: asBrowser(admin) })
      await Promise.race([Promise.all([inviting, rotating]), waitUntilBlockedBy(service.app, changer, '%FROM sites WHERE id = $1%', 2).catch(() => undefined)])
      pause.resume()
      expect((await changing).statusCode).toBe(change.method === 'DELETE' ? 204 : 200)
      for (const answer of [await inviting, await rotating]) expect(answer.statusCode, answer.body).toBe(status)
    }
    expect(await rowsOf('site_invitations', site.id)).toBe(0)
    const rotations = await service.app.database.query("SELECT 1 FROM audit_events WHERE site_id = $1 AND action = 'site.secret_rotated'", [site.id])
    expect(rotations).toHaveLength(0)
  })

  it('keeps the limits of pending invitations and of members exact when requests race for the last places', async () => {
    const site = await createTestSite(service.app, owner, { name: 'Nearly full' })
    for (let count = 0; count < 17; count++) await inviteTo(service.app, owner, site.id, { role: 'viewer' })
    const invitations = await Promise.all(Array.from({ length: 6 }, () => invite(owner, site.id)))
    expect(invitations.map((answer) => answer.statusCode).sort()).toEqual([201, 201, 201, 409, 409, 409])
    expect(await rowsOf('site_invitations', site.id)).toBe(20)

    await addFillerMembers(service.app, site.id, 48)
    const pending = invitations.filter((answer) => answer.statusCode === 201).map((answer) => answer.json<{ token: string }>().token)
    const invitees = await Promise.all(pending.map(() => createTestAccount(service.app)))
    const joins = await Promise.all(pending.map((token, index) => acceptInvitation(service.app, invitees[index] as TestAccount, token)))
    expect(joins.map((answer) => answer.statusCode).sort()).toEqual([201, 201, 409])
    expect(await rowsOf('site_members', site.id)).toBe(50)
  })
})

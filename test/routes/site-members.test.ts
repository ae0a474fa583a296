import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { siteRouteUrl } from '../helpers/auth-cases.js'
import { asBrowser, asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { inviteTo, shareSite } from '../helpers/site-sharing.js'
import { insertVerifications } from '../helpers/verification-rows.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

/** What a viewer may read, every one of them. */
const readRoutes: [Method, string][] = [
  ['GET', '/api/v1/sites/{id}'],
  ['GET', '/api/v1/sites/{id}/stats'],
  ['GET', '/api/v1/sites/{id}/surge'],
  ['GET', '/api/v1/sites/{id}/verifications'],
  ['GET', '/api/v1/sites/{id}/verifications/export'],
  ['GET', '/api/v1/sites/{id}/webhook-deliveries'],
  ['GET', '/api/v1/sites/{id}/members'],
]

/** Every change, with a body it accepts, and what an admin gets (the owner's answer, but for deleting the site). */
const writeRoutes: { method: Method; path: string; body?: object; adminStatus: number }[] = [
  { method: 'PUT', path: '/api/v1/sites/{id}', body: { settings: { difficulty: 20 } }, adminStatus: 200 },
  { method: 'POST', path: '/api/v1/sites/{id}/secret/rotate', adminStatus: 200 },
  { method: 'DELETE', path: '/api/v1/sites/{id}/secret/previous', adminStatus: 204 },
  { method: 'POST', path: '/api/v1/sites/{id}/webhook/test', adminStatus: 409 },
  { method: 'POST', path: '/api/v1/sites/{id}/webhook-deliveries/{deliveryId}/redeliver', adminStatus: 409 },
  { method: 'POST', path: '/api/v1/sites/{id}/invitations', body: { role: 'viewer' }, adminStatus: 201 },
  { method: 'GET', path: '/api/v1/sites/{id}/invitations', adminStatus: 200 },
  { method: 'PUT', path: '/api/v1/sites/{id}/members/{ownerId}', body: { role: 'viewer' }, adminStatus: 409 },
  { method: 'DELETE', path: '/api/v1/sites/{id}/members/{ownerId}', adminStatus: 409 },
  { method: 'PUT', path: '/api/v1/sites/{id}/verifications/{rowId}/label', body: { label: 'fraudulent', reason: 'chargeback' }, adminStatus: 200 },
  { method: 'DELETE', path: '/api/v1/sites/{id}/verifications/{rowId}/label', adminStatus: 204 },
  { method: 'DELETE', path: '/api/v1/sites/{id}/verifications?clientIp=203.0.113.7', adminStatus: 200 },
  { method: 'POST', path: '/api/v1/sites/{id}/transfer', body: { accountId: '00000000-0000-4000-8000-000000000000', password: 'any password' }, adminStatus: 403 },
  { method: 'DELETE', path: '/api/v1/sites/{id}', adminStatus: 403 },
]

describe.each(deployments)('members of a shared site, on $name', ({ available, options }) => {
  let service: TestApp
  let owner: TestAccount
  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp(options)
    owner = await createTestAccount(service.app)
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  const call = async (method: Method, path: string, siteId: string, headers: Record<string, string>, body?: object) =>
    service.app.inject({ method, url: await siteRouteUrl(service.app, { path }, siteId, owner), headers, ...(body === undefined ? {} : { payload: body }) })
  const sharedSite = async (role: 'admin' | 'viewer') => {
    const site = await createTestSite(service.app, owner, { name: `Shared with a ${role}` })
    const member = await createTestAccount(service.app)
    await shareSite(service.app, owner, member, site.id, role)
    return { site, member }
  }
  const auditOf = async (account: TestAccount, siteId: string) =>
    (await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?siteId=${siteId}`, headers: asBrowser(account) })).json<{
      items: { action: string; actor: { type: string; name: string | null; clientIp: string | null }; details: Record<string, unknown> }[]
    }>().items

  it.runIf(available)('lets a viewer read everything of the site, by session and by key, and change nothing (403 forbidden)', async () => {
    const { site, member } = await sharedSite('viewer')
    for (const [method, path] of readRoutes) {
      for (const headers of [asBrowser(member), asScript(member)]) {
        const response = await call(method, path, site.id, headers)
        expect(response.statusCode, `${method} ${path}: ${response.body}`).toBe(200)
      }
    }
    const before = (await call('GET', '/api/v1/sites/{id}', site.id, asScript(owner))).json()
    for (const route of writeRoutes) {
      const response = await call(route.method, route.path, site.id, asBrowser(member), route.body)
      expect(response.statusCode, `${route.method} ${route.path}: ${response.body}`).toBe(403)
      expect(response.json().error.code).toBe('forbidden')
    }
    const put = await call('PUT', '/api/v1/sites/{id}', site.id, asScript(member), { name: 'Renamed' })
    expect(put.json().error.message).toContain('viewer of this site')
    expect((await call('GET', '/api/v1/sites/{id}', site.id, asScript(owner))).json()).toEqual(before)
  })

  it.runIf(available)('lets an admin change settings, rotate the secret, invite and manage the webhook, but not delete the site', async () => {
    const { site, member } = await sharedSite('admin')
    for (const route of writeRoutes) {
      const response = await call(route.method, route.path, site.id, asBrowser(member), route.body)
      expect(response.statusCode, `${route.method} ${route.path}: ${response.body}`).toBe(route.adminStatus)
    }
    const deletion = await call('DELETE', '/api/v1/sites/{id}', site.id, asScript(member))
    expect(deletion.json().error.message).toContain("Only the site's owner")
    const read = await call('GET', '/api/v1/sites/{id}', site.id, asScript(owner))
    expect(read.statusCode).toBe(200)
    expect(read.json().settings.difficulty).toBe(20)
    expect((await call('DELETE', '/api/v1/sites/{id}', site.id, asScript(owner))).statusCode).toBe(204)
  })

  it.runIf(available)("records a member's changes in the owner's log with the member as actor, and a copy in the member's own", async () => {
    const { site, member } = await sharedSite('admin')
    expect((await call('PUT', '/api/v1/sites/{id}', site.id, asBrowser(member), { name: 'Renamed by a member' })).statusCode).toBe(200)
    expect((await call('POST', '/api/v1/sites/{id}/secret/rotate', site.id, asScript(member))).statusCode).toBe(200)
    const invitation = await inviteTo(service.app, member, site.id, { role: 'viewer', email: 'someone@example.com' })

    const ownerLog = await auditOf(owner, site.id)
    expect(ownerLog.map((event) => event.action)).toEqual([
      'site.invitation_created',
      'site.secret_rotated',
      'site.updated',
      'site.member_joined',
      'site.invitation_created',
      'site.created',
    ])
    expect(ownerLog[0]).toMatchObject({ actor: { type: 'session', name: member.email }, details: { invitationId: invitation.id, role: 'viewer', email: 'someone@example.com' } })
    // The key's name is the member's choice: the actor says whose key it is.
    expect(ownerLog[1]?.actor).toMatchObject({ type: 'api-key', name: 'test key', accountId: member.id, email: member.email })
    expect(ownerLog[2]?.actor).toMatchObject({ type: 'session', name: member.email })
    expect(ownerLog[3]).toMatchObject({ actor: { name: member.email }, details: { accountId: member.id, email: member.email, role: 'admin' } })
    expect(ownerLog[4]?.actor.name).toBe(owner.email)
    expect(JSON.stringify(ownerLog)).not.toContain(invitation.token)

    const memberLog = await auditOf(member, site.id)
    expect(memberLog.map((event) => event.action)).toEqual(['site.invitation_created', 'site.secret_rotated', 'site.updated', 'site.member_joined'])
  })

  it.runIf(available)('changes roles and removes members at once; a member leaves; the owner stays (409 owner_role_fixed)', async () => {
    const { site, member } = await sharedSite('admin')
    const other = await createTestAccount(service.app)
    await shareSite(service.app, owner, other, site.id, 'admin')
    // An admin's invitation goes when the admin is made a viewer: no link to let itself back in.
    const pending = await inviteTo(service.app, member, site.id, { role: 'admin' })

    const demoted = await call('PUT', `/api/v1/sites/{id}/members/${member.id}`, site.id, asBrowser(other), { role: 'viewer' })
    expect(demoted.statusCode, demoted.body).toBe(200)
    expect(demoted.json()).toMatchObject({ accountId: member.id, email: member.email, role: 'viewer' })
    expect((await call('PUT', '/api/v1/sites/{id}', site.id, asScript(member), { name: 'Too late' })).statusCode).toBe(403)
    const spent = await service.app.inject({ method: 'POST', url: '/api/v1/invitations/preview', headers: asBrowser(other), payload: { token: pending.token } })
    expect(spent.statusCode).toBe(404)

    for (const method of ['PUT', 'DELETE'] as const) {
      const response = await call(method, '/api/v1/sites/{id}/members/{ownerId}', site.id, asBrowser(other), method === 'PUT' ? { role: 'viewer' } : undefined)
      expect(response.statusCode).toBe(409)
      expect(response.json().error.code).toBe('owner_role_fixed')
    }
    expect((await call('DELETE', '/api/v1/sites/{id}/members/{ownerId}', site.id, asBrowser(owner))).json().error.code).toBe('owner_role_fixed')

    // A viewer may not remove others, but may leave.
    expect((await call('DELETE', `/api/v1/sites/{id}/members/${other.id}`, site.id, asBrowser(member))).statusCode).toBe(403)
    const left = await call('DELETE', `/api/v1/sites/{id}/members/${member.id}`, site.id, asBrowser(member))
    expect(left.statusCode, left.body).toBe(204)
    expect((await call('GET', '/api/v1/sites/{id}', site.id, asScript(member))).statusCode).toBe(404)

    // A removed admin's open link is revoked with it, and the owner's log says so.
    const othersLink = await inviteTo(service.app, other, site.id, { role: 'admin' })
    const removed = await call('DELETE', `/api/v1/sites/{id}/members/${other.id}`, site.id, asBrowser(owner))
    expect(removed.statusCode).toBe(204)
    for (const [method, path] of readRoutes) expect((await call(method, path, site.id, asScript(other))).statusCode, path).toBe(404)
    expect((await call('DELETE', `/api/v1/sites/{id}/members/${other.id}`, site.id, asBrowser(owner))).statusCode).toBe(404)
    const members = (await call('GET', '/api/v1/sites/{id}/members', site.id, asBrowser(owner))).json().items
    expect(members).toEqual([expect.objectContaining({ accountId: owner.id, role: 'owner' })])

    const ownerLog = await auditOf(owner, site.id)
    const actions = ownerLog.slice(0, 7).map((event) => [event.action, event.actor.name, event.details.accountId ?? event.details.invitationId])
    expect(actions).toEqual([
      ['site.invitation_revoked', owner.email, othersLink.id],
      ['site.member_removed', owner.email, other.id],
      ['site.invitation_created', other.email, othersLink.id],
      ['site.member_left', member.email, member.id],
      ['site.invitation_revoked', other.email, pending.id],
      ['site.member_role_changed', other.email, member.id],
      ['site.invitation_created', member.email, pending.id],
    ])
    expect(ownerLog[0]?.details).toEqual({ invitationId: othersLink.id, role: 'admin', email: null, invitedBy: other.email, reason: 'member_removed' })
    expect(ownerLog[4]?.details).toMatchObject({ invitedBy: member.email, reason: 'made_viewer' })
  })

  it.runIf(available)("takes a deleted member's memberships, and a deleted site's members and invitations, with them", async () => {
    const { site, member } = await sharedSite('viewer')
    await inviteTo(service.app, owner, site.id, { role: 'viewer' })
    const deleted = await service.app.inject({ method: 'DELETE', url: '/api/v1/me', headers: asBrowser(member), payload: { password: member.password } })
    expect(deleted.statusCode, deleted.body).toBe(204)
    const count = async (table: string) => (await service.app.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE site_id = $1`, [site.id]))[0]?.n
    expect(await count('site_members')).toBe(0)
    expect((await call('GET', '/api/v1/sites/{id}/members', site.id, asBrowser(owner))).json().items).toHaveLength(1)

    const next = await createTestAccount(service.app)
    await shareSite(service.app, owner, next, site.id, 'admin')
    expect(await count('site_invitations')).toBe(1)
    expect((await call('DELETE', '/api/v1/sites/{id}', site.id, asScript(owner))).statusCode).toBe(204)
    expect(await count('site_members')).toBe(0)
    expect(await count('site_invitations')).toBe(0)
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asBrowser(next) })).json().items).toEqual([])
  })

  it.runIf(available)("hides the webhook URL from viewers (a Slack-style URL is a credential), in the site and its deliveries; admins see it", async () => {
    const { site, member: viewer } = await sharedSite('viewer')
    const admin = await createTestAccount(service.app)
    await shareSite(service.app, owner, admin, site.id, 'admin')
    const webhookUrl = 'https://hooks.example.com/services/T000/B000/secret-path-part'
    const set = await call('PUT', '/api/v1/sites/{id}', site.id, asScript(owner), { settings: { webhookUrl, webhookSecret: 'a-long-random-secret-for-webhooks' } })
    expect(set.statusCode, set.body).toBe(200)
    await service.app.database.query(
      "INSERT INTO webhook_deliveries (id, site_id, event, url, outcome, latency_ms) VALUES (gen_random_uuid(), $1, 'verification.blocked', $2, 'failed', 5)",
      [site.id, webhookUrl],
    )

    const asViewer = [
      (await call('GET', '/api/v1/sites/{id}', site.id, asScript(viewer))).json(),
      (await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asBrowser(viewer) })).json().items[0],
    ]
    for (const view of asViewer) expect(view.settings).toMatchObject({ webhookUrl: null, webhookUrlSet: true, webhookSecretSet: true })
    const deliveries = await call('GET', '/api/v1/sites/{id}/webhook-deliveries', site.id, asScript(viewer))
    expect(deliveries.json().items).toEqual([expect.objectContaining({ url: 'https://hooks.example.com' })])
    expect(deliveries.body).not.toContain('secret-path-part')

    for (const account of [owner, admin]) {
      expect((await call('GET', '/api/v1/sites/{id}', site.id, asScript(account))).json().settings).toMatchObject({ webhookUrl, webhookUrlSet: true })
      expect((await call('GET', '/api/v1/sites/{id}/webhook-deliveries', site.id, asScript(account))).json().items[0].url).toBe(webhookUrl)
    }
  })

  it.runIf(available)('takes account ids in either case: the owner stays (409), a member leaving in upper case leaves', async () => {
    const { site, member } = await sharedSite('admin')
    for (const method of ['PUT', 'DELETE'] as const) {
      const response = await call(method, `/api/v1/sites/{id}/members/${owner.id.toUpperCase()}`, site.id, asBrowser(member), method === 'PUT' ? { role: 'viewer' } : undefined)
      expect(response.statusCode, response.body).toBe(409)
      expect(response.json().error.code).toBe('owner_role_fixed')
    }
    const left = await call('DELETE', `/api/v1/sites/{id}/members/${member.id.toUpperCase()}`, site.id, asBrowser(member))
    expect(left.statusCode, left.body).toBe(204)
    expect((await auditOf(owner, site.id))[0]).toMatchObject({ action: 'site.member_left', details: { accountId: member.id } })
  })

  it.runIf(available)("revokes a member's invitations when it is removed, when it leaves, and when its account is deleted", async () => {
    const pendingOf = async (siteId: string) =>
      (await call('GET', '/api/v1/sites/{id}/invitations', siteId, asBrowser(owner))).json<{ items: { invitedBy: string }[] }>().items
    const departures: [string, (site: { id: string }, member: TestAccount) => Promise<{ statusCode: number; body: string }>][] = [
      ['removed', (site, member) => call('DELETE', `/api/v1/sites/{id}/members/${member.id}`, site.id, asBrowser(owner))],
      ['leaving', (site, member) => call('DELETE', `/api/v1/sites/{id}/members/${member.id}`, site.id, asBrowser(member))],
      ['deleted', (_, member) => service.app.inject({ method: 'DELETE', url: '/api/v1/me', headers: asBrowser(member), payload: { password: member.password } })],
    ]
    for (const [how, depart] of departures) {
      const { site, member } = await sharedSite('admin')
      await inviteTo(service.app, owner, site.id, { role: 'viewer' })
      const made = await inviteTo(service.app, member, site.id, { role: 'admin' })
      const departed = await depart(site, member)
      expect(departed.statusCode, `${how}: ${departed.body}`).toBe(204)
      const stranger = await createTestAccount(service.app)
      const spent = await service.app.inject({ method: 'POST', url: '/api/v1/invitations/preview', headers: asBrowser(stranger), payload: { token: made.token } })
      expect(spent.statusCode, how).toBe(404)
      expect((await pendingOf(site.id)).map((invitation) => invitation.invitedBy), how).toEqual([owner.email])
    }
  })

  it.runIf(available)("lets an admin demote and remove another admin, recorded in the owner's log, the acting admin's and the member's own", async () => {
    const { site, member: acting } = await sharedSite('admin')
    const other = await createTestAccount(service.app)
    await shareSite(service.app, owner, other, site.id, 'admin')
    const demoted = await call('PUT', `/api/v1/sites/{id}/members/${other.id}`, site.id, asBrowser(acting), { role: 'viewer' })
    expect(demoted.statusCode, demoted.body).toBe(200)
    const roleChanged = {
      action: 'site.member_role_changed',
      actor: { type: 'session', name: acting.email },
      site: { id: site.id, name: site.name },
      details: { accountId: other.id, email: other.email, from: 'admin', to: 'viewer' },
    }
    for (const account of [owner, acting, other]) expect((await auditOf(account, site.id))[0], account.email).toMatchObject(roleChanged)

    const removed = await call('DELETE', `/api/v1/sites/{id}/members/${other.id}`, site.id, asBrowser(acting))
    expect(removed.statusCode, removed.body).toBe(204)
    expect((await call('GET', '/api/v1/sites/{id}', site.id, asScript(other))).statusCode).toBe(404)

    const expected = {
      action: 'site.member_removed',
      actor: { type: 'session', name: acting.email },
      site: { id: site.id, name: site.name },
      details: { accountId: other.id, email: other.email, role: 'viewer' },
    }
    expect((await auditOf(owner, site.id))[0]).toMatchObject(expected)
    expect((await auditOf(acting, site.id))[0]).toMatchObject(expected)
    // The removed member's log says who removed it from which site, and not from where.
    const ownCopies = await auditOf(other, site.id)
    expect(ownCopies.slice(0, 2)).toMatchObject([expected, roleChanged])
    for (const event of ownCopies.slice(0, 2)) expect(event.actor).toMatchObject({ clientIp: null, userAgent: null })
    expect((await auditOf(owner, site.id))[0]?.actor.clientIp).not.toBeNull()
  })

  it.runIf(available)("writes the owner's removal of a member in the member's own log, and a member leaving only once", async () => {
    const { site, member } = await sharedSite('viewer')
    const removed = await call('DELETE', `/api/v1/sites/{id}/members/${member.id}`, site.id, asBrowser(owner))
    expect(removed.statusCode, removed.body).toBe(204)
    const everything = (await service.app.inject({ method: 'GET', url: '/api/v1/audit-log', headers: asBrowser(member) })).json().items
    expect(everything[0]).toMatchObject({
      action: 'site.member_removed',
      actor: { type: 'session', name: owner.email, clientIp: null, userAgent: null },
      site: { id: site.id, name: site.name },
      details: { accountId: member.id, role: 'viewer' },
    })

    const { site: left, member: leaving } = await sharedSite('admin')
    expect((await call('DELETE', `/api/v1/sites/{id}/members/${leaving.id}`, left.id, asBrowser(leaving))).statusCode).toBe(204)
    expect((await auditOf(leaving, left.id)).filter((event) => event.action === 'site.member_left')).toHaveLength(1)
  })

  it.runIf(available)("finds a visitor's reference in the logs of shared sites too", async () => {
    const { site, member } = await sharedSite('viewer')
    const id = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d'
    await insertVerifications(service.app.database, [{ id, siteId: site.id, createdAt: new Date(), action: 'block', riskScore: 90 }])
    const found = await service.app.inject({ method: 'GET', url: '/api/v1/verifications?reference=1a2b3c4d-5e6f', headers: asScript(member) })
    expect(found.statusCode, found.body).toBe(200)
    expect(found.json().items).toEqual([expect.objectContaining({ id, siteId: site.id })])
  })
})

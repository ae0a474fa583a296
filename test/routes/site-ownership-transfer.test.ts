import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { asBrowser, asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { acceptInvitation, inviteTo, shareSite, useAppWithOwner } from '../helpers/site-sharing.js'
import { deployments } from '../helpers/test-app.js'
import { enableTwoFactor } from '../helpers/two-factor.js'

interface AuditItem {
  action: string
  actor: { type: string; name: string | null }
  site: { id: string; name: string } | null
  details: Record<string, unknown>
}

describe.each(deployments)("transferring a site's ownership to a member, on $name", (deployment) => {
  const { available } = deployment
  const suite = useAppWithOwner(deployment)

  const transfer = (siteId: string, headers: Record<string, string>, body: object) =>
    suite.service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/transfer`, headers, payload: body })
  const read = (siteId: string, account: TestAccount) => suite.service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}`, headers: asScript(account) })
  const membersOf = async (siteId: string, account: TestAccount) =>
    (await suite.service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}/members`, headers: asBrowser(account) })).json<{ items: { accountId: string; role: string }[] }>().items
  const auditOf = async (account: TestAccount, siteId: string) =>
    (await suite.service.app.inject({ method: 'GET', url: `/api/v1/audit-log?siteId=${siteId}`, headers: asBrowser(account) })).json<{ items: AuditItem[] }>().items
  /** A site of `owner` shared with a new account as `role`. */
  const sharedSite = async (role: 'admin' | 'viewer', siteOwner = suite.owner) => {
    const site = await createTestSite(suite.service.app, siteOwner, { name: `Handed over by a ${role}'s owner` })
    const member = await createTestAccount(suite.service.app)
    await shareSite(suite.service.app, siteOwner, member, site.id, role)
    return { site, member }
  }

  it.runIf(available)('makes an admin the owner and the owner an admin: each account is offered what its new role allows', async () => {
    const { site, member } = await sharedSite('admin')
    const transferred = await transfer(site.id, asBrowser(suite.owner), { accountId: member.id, password: suite.owner.password })
    expect(transferred.statusCode, transferred.body).toBe(200)
    expect(transferred.json()).toMatchObject({ id: site.id, role: 'admin', siteKey: site.siteKey })
    expect(transferred.headers.etag).toMatch(/^"\d+"$/)

    expect(await membersOf(site.id, suite.owner)).toEqual([
      expect.objectContaining({ accountId: member.id, role: 'owner' }),
      expect.objectContaining({ accountId: suite.owner.id, role: 'admin' }),
    ])
    const listed = async (account: TestAccount) =>
      (await suite.service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asBrowser(account) })).json<{ items: { id: string; role: string }[] }>().items.find((each) => each.id === site.id)?.role
    expect(await listed(member)).toBe('owner')
    expect(await listed(suite.owner)).toBe('admin')

    // The previous owner's session and API key have an admin's rights: no deleting, no transferring back.
    for (const headers of [asBrowser(suite.owner), asScript(suite.owner)]) {
      const deletion = await suite.service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}`, headers })
      expect(deletion.statusCode, deletion.body).toBe(403)
      expect(deletion.json().error.code).toBe('forbidden')
      const back = await transfer(site.id, headers, { accountId: suite.owner.id, password: suite.owner.password })
      expect(back.statusCode, back.body).toBe(403)
    }
    const renamed = await suite.service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(suite.owner), payload: { name: 'Renamed by the admin' } })
    expect(renamed.statusCode, renamed.body).toBe(200)
    // The new owner's role is fixed now, the previous owner's can change.
    const demoteOwner = await suite.service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}/members/${member.id}`, headers: asBrowser(suite.owner), payload: { role: 'viewer' } })
    expect(demoteOwner.json().error.code).toBe('owner_role_fixed')
    const demoted = await suite.service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}/members/${suite.owner.id}`, headers: asBrowser(member), payload: { role: 'viewer' } })
    expect(demoted.statusCode, demoted.body).toBe(200)
    expect((await read(site.id, suite.owner)).json().role).toBe('viewer')

    // The site itself is as it was: its key still serves challenges.
    const challenge = await suite.service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: { 'x-site-key': site.siteKey, origin: 'https://shop.example.com' } })
    expect(challenge.statusCode, challenge.body).toBe(200)
    expect((await suite.service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}`, headers: asScript(member) })).statusCode).toBe(204)
  })

  it.runIf(available)("records the transfer in both accounts' logs, and the site's later events in the new owner's", async () => {
    const { site, member } = await sharedSite('viewer')
    expect((await transfer(site.id, asBrowser(suite.owner), { accountId: member.id, password: suite.owner.password })).statusCode).toBe(200)
    const expected = {
      action: 'site.ownership_transferred',
      actor: { type: 'session', name: suite.owner.email },
      site: { id: site.id, name: site.name },
      details: { accountId: member.id, email: member.email, role: 'viewer', previousOwnerId: suite.owner.id, previousOwnerEmail: suite.owner.email },
    }
    expect((await auditOf(member, site.id))[0]).toMatchObject(expected)
    expect((await auditOf(suite.owner, site.id))[0]).toMatchObject(expected)
    const filtered = await suite.service.app.inject({ method: 'GET', url: '/api/v1/audit-log?action=site.ownership_transferred', headers: asBrowser(member) })
    expect(filtered.json().items).toEqual([expect.objectContaining({ action: 'site.ownership_transferred' })])

    // The previous suite.owner, now an admin, changes the site: the event is the new owner's, with a copy in the admin's.
    expect((await suite.service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/secret/rotate`, headers: asBrowser(suite.owner) })).statusCode).toBe(200)
    expect((await auditOf(member, site.id))[0]).toMatchObject({ action: 'site.secret_rotated', actor: { name: suite.owner.email } })
    expect((await auditOf(suite.owner, site.id))[0]).toMatchObject({ action: 'site.secret_rotated', actor: { name: suite.owner.email } })
    // The new owner's own change has no copy to make: the previous owner's log does not get it.
    expect((await suite.service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(member), payload: { name: 'Renamed by its new owner' } })).statusCode).toBe(200)
    expect((await auditOf(member, site.id))[0]?.action).toBe('site.updated')
    expect((await auditOf(suite.owner, site.id))[0]?.action).toBe('site.secret_rotated')
  })

  it.runIf(available)('keeps pending invitations working, each still naming who made it', async () => {
    const { site, member } = await sharedSite('admin')
    const byOwner = await inviteTo(suite.service.app, suite.owner, site.id, { role: 'viewer' })
    const byMember = await inviteTo(suite.service.app, member, site.id, { role: 'admin' })
    expect((await transfer(site.id, asBrowser(suite.owner), { accountId: member.id, password: suite.owner.password })).statusCode).toBe(200)

    const pending = (await suite.service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/invitations`, headers: asBrowser(member) })).json<{ items: { id: string; invitedBy: string }[] }>().items
    expect(pending.map(({ id, invitedBy }) => [id, invitedBy])).toEqual([[byOwner.id, suite.owner.email], [byMember.id, member.email]])
    for (const invitation of [byOwner, byMember]) {
      const joined = await acceptInvitation(suite.service.app, await createTestAccount(suite.service.app), invitation.token)
      expect(joined.statusCode, joined.body).toBe(201)
    }
    expect((await membersOf(site.id, member)).map((each) => each.role)).toEqual(['owner', 'admin', 'viewer', 'admin'])
  })

  it.runIf(available)('refuses a transfer by a member, to a non-member, to the owner itself and of a malformed id, changing nothing', async () => {
    const { site, member: admin } = await sharedSite('admin')
    const viewer = await createTestAccount(suite.service.app)
    await shareSite(suite.service.app, suite.owner, viewer, site.id, 'viewer')
    const stranger = await createTestAccount(suite.service.app)
    const readKey = await suite.service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: asBrowser(suite.owner), payload: { name: 'monitor', access: 'read', password: suite.owner.password } })
    expect(readKey.statusCode, readKey.body).toBe(201)
    const before = { site: (await read(site.id, suite.owner)).json(), members: await membersOf(site.id, suite.owner) }

    const password = suite.owner.password
    const refusals: [string, Record<string, string>, object, number, string][] = [
      ['an admin', asBrowser(admin), { accountId: viewer.id, password: admin.password }, 403, 'forbidden'],
      ['an admin to itself', asScript(admin), { accountId: admin.id, password: admin.password }, 403, 'forbidden'],
      ['a viewer', asBrowser(viewer), { accountId: admin.id, password: viewer.password }, 403, 'forbidden'],
      ['a stranger', asBrowser(stranger), { accountId: admin.id, password: stranger.password }, 404, 'not_found'],
      ["the owner's read-only key", { authorization: `Bearer ${readKey.json<{ key: string }>().key}` }, { accountId: admin.id, password }, 403, 'forbidden'],
      // A full key that leaked must not take the site over: the transfer is a logged-in session's only.
      ["the owner's full API key", asScript(suite.owner), { accountId: admin.id, password }, 403, 'forbidden'],
      ['with a wrong password', asBrowser(suite.owner), { accountId: admin.id, password: `${password}-wrong` }, 400, 'validation_error'],
      ['without a password', asBrowser(suite.owner), { accountId: admin.id }, 400, 'validation_error'],
      ['to a non-member', asBrowser(suite.owner), { accountId: stranger.id, password }, 409, 'not_a_member'],
      ['to an unknown account', asBrowser(suite.owner), { accountId: randomUUID(), password }, 409, 'not_a_member'],
      ['to the owner itself', asBrowser(suite.owner), { accountId: suite.owner.id.toUpperCase(), password }, 409, 'already_owner'],
      ['of a malformed id', asBrowser(suite.owner), { accountId: "1' OR '1'='1", password }, 400, 'validation_error'],
      ['without an id', asBrowser(suite.owner), { password }, 400, 'validation_error'],
      ['with more fields', asBrowser(suite.owner), { accountId: admin.id, password, role: 'owner' }, 400, 'validation_error'],
    ]
    for (const [who, headers, body, status, code] of refusals) {
      const response = await transfer(site.id, headers, body)
      expect(response.statusCode, `${who}: ${response.body}`).toBe(status)
      expect(response.json().error.code, who).toBe(code)
    }
    const malformed = await transfer(site.id, asBrowser(suite.owner), { accountId: 'not-a-uuid', password: suite.owner.password })
    expect(malformed.json().error.details).toEqual([expect.objectContaining({ field: 'accountId' })])
    const wrongPassword = await transfer(site.id, asBrowser(suite.owner), { accountId: admin.id, password: 'not the password' })
    expect(wrongPassword.json().error.details).toEqual([{ field: 'password', message: 'is not your current password' }])
    const byKey = await transfer(site.id, asScript(suite.owner), { accountId: admin.id, password })
    expect(byKey.json().error.message).toContain('Only a logged-in session')
    expect({ site: (await read(site.id, suite.owner)).json(), members: await membersOf(site.id, suite.owner) }).toEqual(before)
    expect((await auditOf(suite.owner, site.id)).map((event) => event.action)).not.toContain('site.ownership_transferred')
  })

  it.runIf(available)('refuses a member who owns the most sites an account may (409 site_limit_reached), and lets it once it deleted one', async () => {
    const siteOwner = await createTestAccount(suite.service.app)
    const { site, member } = await sharedSite('admin', siteOwner)
    // 100 sites of the member's own, written straight in: as many creations would spend the time on audit events.
    await suite.service.app.database.query(
      `INSERT INTO sites (id, account_id, name, site_key, secret_key_hash)
       SELECT gen_random_uuid(), $1, 'Filler ' || n, 'tgk_filler_' || n || '_' || $2, 'x' FROM generate_series(1, 100) n`,
      [member.id, member.id.slice(0, 8)],
    )
    const refused = await transfer(site.id, asBrowser(siteOwner), { accountId: member.id, password: siteOwner.password })
    expect(refused.statusCode, refused.body).toBe(409)
    expect(refused.json().error).toMatchObject({ code: 'site_limit_reached', message: expect.stringContaining(member.email) })
    expect((await read(site.id, siteOwner)).json().role).toBe('owner')

    const [filler] = await suite.service.app.database.query<{ id: string }>('SELECT id FROM sites WHERE account_id = $1 LIMIT 1', [member.id])
    expect((await suite.service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${filler?.id}`, headers: asScript(member) })).statusCode).toBe(204)
    expect((await transfer(site.id, asBrowser(siteOwner), { accountId: member.id, password: siteOwner.password })).statusCode).toBe(200)
    expect((await read(site.id, member)).json().role).toBe('owner')
  })

  it.runIf(available)("drops the site from the instance's cache: the owner it serves from memory is the new one", async () => {
    const { site, member } = await sharedSite('viewer')
    expect((await suite.service.app.siteCache.findById(site.id))?.accountId).toBe(suite.owner.id)
    expect((await transfer(site.id, asBrowser(suite.owner), { accountId: member.id.toUpperCase(), password: suite.owner.password })).statusCode).toBe(200)
    expect((await suite.service.app.siteCache.findById(site.id))?.accountId).toBe(member.id)
    // The new owner's account deletion takes the site with it; the previous owner loses it too.
    expect((await suite.service.app.inject({ method: 'DELETE', url: '/api/v1/me', headers: asBrowser(member), payload: { password: member.password } })).statusCode).toBe(204)
    expect((await read(site.id, suite.owner)).statusCode).toBe(404)
  })

  it.runIf(available)('asks an owner with two-factor authentication on for a code of the second factor too, as a password change does', async () => {
    const siteOwner = await createTestAccount(suite.service.app)
    const { site, member } = await sharedSite('admin', siteOwner)
    const { recoveryCodes } = await enableTwoFactor(suite.service.app, siteOwner)
    const withoutCode = await transfer(site.id, asBrowser(siteOwner), { accountId: member.id, password: siteOwner.password })
    expect(withoutCode.statusCode, withoutCode.body).toBe(400)
    expect(withoutCode.json().error.details).toEqual([expect.objectContaining({ field: 'code' })])
    const wrongCode = await transfer(site.id, asBrowser(siteOwner), { accountId: member.id, password: siteOwner.password, code: 'aaaa-bbbb-cccc' })
    expect(wrongCode.statusCode, wrongCode.body).toBe(400)
    expect(wrongCode.json().error.details).toEqual([expect.objectContaining({ field: 'code' })])
    expect((await read(site.id, siteOwner)).json().role).toBe('owner')
    // A refusal of the transfer itself leaves the code unspent: it is taken in the transfer's transaction.
    const toStranger = await transfer(site.id, asBrowser(siteOwner), { accountId: randomUUID(), password: siteOwner.password, code: recoveryCodes[0] })
    expect(toStranger.json().error.code).toBe('not_a_member')
    const transferred = await transfer(site.id, asBrowser(siteOwner), { accountId: member.id, password: siteOwner.password, code: recoveryCodes[0] })
    expect(transferred.statusCode, transferred.body).toBe(200)
    expect((await read(site.id, member)).json().role).toBe('owner')
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, asScript, createTestAccount, createTestSite, OWN_ORIGIN, type TestAccount } from '../helpers/dashboard-client.js'
import { acceptInvitation, addFillerMembers, inviteTo } from '../helpers/site-sharing.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

describe.each(deployments)('invitations to a site, on $name', ({ available, options }) => {
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

  const preview = (account: TestAccount, token: string, headers = asBrowser(account)) =>
    service.app.inject({ method: 'POST', url: '/api/v1/invitations/preview', headers, payload: { token } })
  const sitesOf = async (account: TestAccount) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asBrowser(account) })).json<{ items: { id: string; role: string }[] }>().items
  const expectUnknown = async (account: TestAccount, token: string) => {
    for (const response of [await preview(account, token), await acceptInvitation(service.app, account, token)]) {
      expect(response.statusCode, response.body).toBe(404)
      expect(response.json().error.code).toBe('not_found')
    }
  }

  it.runIf(available)('invites, previews, accepts: the invitee sees the site as a viewer, in its list and on its own', async () => {
    const site = await createTestSite(service.app, owner, { name: 'Shared shop' })
    const invitee = await createTestAccount(service.app)
    const invitation = await inviteTo(service.app, owner, site.id, { role: 'viewer' })
    expect(invitation.token).toMatch(/^tgi_[A-Za-z0-9_-]{43}$/)
    expect(invitation.url).toBe(`${OWN_ORIGIN}/dashboard/invite#${invitation.token}`)

    const listed = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/invitations`, headers: asBrowser(owner) })
    expect(listed.json().items).toEqual([{ id: invitation.id, role: 'viewer', email: null, invitedBy: owner.email, createdAt: expect.any(String), expiresAt: expect.any(String) }])
    expect(listed.body).not.toContain(invitation.token)

    const previewed = await preview(invitee, invitation.token)
    expect(previewed.statusCode, previewed.body).toBe(200)
    expect(previewed.json()).toEqual({
      site: { id: site.id, name: 'Shared shop' },
      role: 'viewer',
      invitedBy: owner.email,
      boundToEmail: false,
      forYou: true,
      email: null,
      expiresAt: expect.any(String),
      twoFactorRequired: false,
    })
    const days = (Date.parse(previewed.json<{ expiresAt: string }>().expiresAt) - Date.now()) / 86_400_000
    expect(days).toBeGreaterThan(6.99)
    expect(days).toBeLessThanOrEqual(7)

    const accepted = await acceptInvitation(service.app, invitee, invitation.token)
    expect(accepted.statusCode, accepted.body).toBe(201)
    expect(accepted.json()).toMatchObject({ id: site.id, name: 'Shared shop', role: 'viewer', siteKey: site.siteKey })
    expect(accepted.json()).not.toHaveProperty('secretKey')

    expect(await sitesOf(invitee)).toEqual([expect.objectContaining({ id: site.id, role: 'viewer' })])
    expect((await sitesOf(owner)).find((each) => each.id === site.id)?.role).toBe('owner')
    const read = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}`, headers: asScript(invitee) })
    expect(read.statusCode).toBe(200)
    expect(read.json().role).toBe('viewer')

    const members = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/members`, headers: asBrowser(invitee) })
    expect(members.json().items).toEqual([
      { accountId: owner.id, email: owner.email, role: 'owner', since: site.createdAt },
      { accountId: invitee.id, email: invitee.email, role: 'viewer', since: expect.any(String) },
    ])
    // Used: the link is spent, and no longer pending.
    await expectUnknown(invitee, invitation.token)
    expect((await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/invitations`, headers: asBrowser(owner) })).json().items).toEqual([])
  })

  it.runIf(available)('refuses an invitation bound to an e-mail address to any other account, which stays pending for the right one', async () => {
    const site = await createTestSite(service.app, owner)
    const intended = await createTestAccount(service.app)
    const other = await createTestAccount(service.app)
    const invitation = await inviteTo(service.app, owner, site.id, { role: 'admin', email: `  ${intended.email.toUpperCase()} ` })
    expect(invitation.email).toBe(intended.email.toUpperCase())
    // Whoever else holds the link learns that it is for another account, not whose.
    const seenByOther = await preview(other, invitation.token)
    expect(seenByOther.json()).toMatchObject({ boundToEmail: true, forYou: false, email: null })
    expect(seenByOther.body.toLowerCase()).not.toContain(intended.email.toLowerCase())
    expect((await preview(intended, invitation.token)).json()).toMatchObject({ boundToEmail: true, forYou: true, email: intended.email.toUpperCase() })
    const refused = await acceptInvitation(service.app, other, invitation.token)
    expect(refused.statusCode).toBe(403)
    expect(refused.json().error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('another e-mail address') })
    expect(await sitesOf(other)).toEqual([])
    const accepted = await acceptInvitation(service.app, intended, invitation.token)
    expect(accepted.statusCode, accepted.body).toBe(201)
    expect(accepted.json().role).toBe('admin')
  })

  it.runIf(available)('answers 404 alike to expired, revoked, used and unknown tokens', async () => {
    const site = await createTestSite(service.app, owner)
    const invitee = await createTestAccount(service.app)
    const expired = await inviteTo(service.app, owner, site.id, { role: 'viewer' })
    await service.app.database.query("UPDATE site_invitations SET expires_at = now() - interval '1 second' WHERE id = $1", [expired.id])
    await expectUnknown(invitee, expired.token)

    const revoked = await inviteTo(service.app, owner, site.id, { role: 'viewer' })
    const revoke = await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}/invitations/${revoked.id}`, headers: asBrowser(owner) })
    expect(revoke.statusCode).toBe(204)
    await expectUnknown(invitee, revoked.token)
    const again = await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}/invitations/${revoked.id}`, headers: asBrowser(owner) })
    expect(again.statusCode).toBe(404)

    await expectUnknown(invitee, `tgi_${'A'.repeat(43)}`)
    await expectUnknown(invitee, 'not a token')
    expect(await sitesOf(invitee)).toEqual([])
  })

  it.runIf(available)("answers 404 to an invitation whose inviter is disabled, and lists it no more (an older instance's npm run account disabled it without revoking)", async () => {
    const site = await createTestSite(service.app, owner)
    const colleague = await createTestAccount(service.app)
    const admin = await inviteTo(service.app, owner, site.id, { role: 'admin' })
    expect((await acceptInvitation(service.app, colleague, admin.token)).statusCode).toBe(201)
    const kept = await inviteTo(service.app, colleague, site.id, { role: 'admin' })
    await service.app.database.query('UPDATE accounts SET disabled_at = now() WHERE id = $1', [colleague.id])

    const stranger = await createTestAccount(service.app)
    await expectUnknown(stranger, kept.token)
    expect(await sitesOf(stranger)).toEqual([])
    const listed = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/invitations`, headers: asBrowser(owner) })
    expect(listed.json().items).toEqual([])
  })

  it.runIf(available)('refuses API keys (403), and the owner or a member accepting (409), leaving the link usable', async () => {
    const site = await createTestSite(service.app, owner)
    const invitee = await createTestAccount(service.app)
    const invitation = await inviteTo(service.app, owner, site.id, { role: 'viewer' })
    for (const url of ['/api/v1/invitations/preview', '/api/v1/invitations/accept']) {
      const byKey = await service.app.inject({ method: 'POST', url, headers: asScript(invitee), payload: { token: invitation.token } })
      expect(byKey.statusCode, url).toBe(403)
      expect(byKey.json().error.code).toBe('forbidden')
    }
    const byOwner = await acceptInvitation(service.app, owner, invitation.token)
    expect(byOwner.statusCode).toBe(409)
    expect(byOwner.json().error.code).toBe('conflict')
    expect((await acceptInvitation(service.app, invitee, invitation.token)).statusCode).toBe(201)
    const second = await inviteTo(service.app, owner, site.id, { role: 'admin' })
    const byMember = await acceptInvitation(service.app, invitee, second.token)
    expect(byMember.statusCode).toBe(409)
    expect(byMember.json().error.message).toContain('member of this site already')
    expect((await sitesOf(invitee)).find((each) => each.id === site.id)?.role).toBe('viewer')
  })

  it.runIf(available)('lets exactly one of two acceptances of one link at once join', async () => {
    const site = await createTestSite(service.app, owner)
    const first = await createTestAccount(service.app)
    const second = await createTestAccount(service.app)
    const invitation = await inviteTo(service.app, owner, site.id, { role: 'viewer' })
    const answers = await Promise.all([first, second, first].map((account) => acceptInvitation(service.app, account, invitation.token)))
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 404, 404])
    const members = await service.app.database.query('SELECT account_id FROM site_members WHERE site_id = $1', [site.id])
    expect(members).toHaveLength(1)
  })

  it.runIf(available)('keeps at most 20 pending invitations per site, and 50 members', async () => {
    const site = await createTestSite(service.app, owner)
    for (let count = 0; count < 20; count++) await inviteTo(service.app, owner, site.id, { role: 'viewer' })
    const over = await service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/invitations`, headers: asBrowser(owner), payload: { role: 'viewer' } })
    expect(over.statusCode).toBe(409)
    expect(over.json().error).toMatchObject({ code: 'conflict', message: 'A site holds at most 20 pending invitations; revoke one first.' })
    const pending = (await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/invitations`, headers: asBrowser(owner) })).json().items
    expect(pending).toHaveLength(20)
    // An expired invitation makes room.
    await service.app.database.query("UPDATE site_invitations SET expires_at = now() - interval '1 second' WHERE id = $1", [pending[0].id])
    const invitation = await inviteTo(service.app, owner, site.id, { role: 'viewer' })

    await addFillerMembers(service.app, site.id, 50)
    const invitee = await createTestAccount(service.app)
    const full = await acceptInvitation(service.app, invitee, invitation.token)
    expect(full.statusCode).toBe(409)
    expect(full.json().error.message).toBe('A site has at most 50 members; ask its owner to remove one first.')
    expect(await sitesOf(invitee)).toEqual([])
  })

  it.runIf(available)('refuses a malformed e-mail address and a role other than admin or viewer', async () => {
    const site = await createTestSite(service.app, owner)
    for (const payload of [{ role: 'viewer', email: 'not an address' }, { role: 'owner' }, {}]) {
      const response = await service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/invitations`, headers: asBrowser(owner), payload })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error.code).toBe('validation_error')
    }
  })
})

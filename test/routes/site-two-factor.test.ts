import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { asBrowser, asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { acceptInvitation, inviteTo, shareSite, useAppWithOwner } from '../helpers/site-sharing.js'
import { deployments } from '../helpers/test-app.js'
import { enableTwoFactor } from '../helpers/two-factor.js'
import { insertVerifications } from '../helpers/verification-rows.js'

/** What a member reads of a site: each is closed to one without two-factor once the site requires it. */
const readPaths = [
  '/api/v1/sites/{id}',
  '/api/v1/sites/{id}/stats',
  '/api/v1/sites/{id}/surge',
  '/api/v1/sites/{id}/verifications',
  '/api/v1/sites/{id}/verifications/export',
  '/api/v1/sites/{id}/webhook-deliveries',
  '/api/v1/sites/{id}/members',
]

describe.each(deployments)('a site that requires two-factor authentication of its members, on $name', (deployment) => {
  const suite = useAppWithOwner(deployment)
  const { available } = deployment

  const put = (account: TestAccount, siteId: string, settings: object) =>
    suite.service.app.inject({ method: 'PUT', url: `/api/v1/sites/${siteId}`, headers: asBrowser(account), payload: { settings } })
  const get = (headers: Record<string, string>, url: string) => suite.service.app.inject({ method: 'GET', url, headers })
  const siteList = async (account: TestAccount) =>
    (await get(asScript(account), '/api/v1/sites')).json<{ items: { id: string }[]; sitesRequiringTwoFactor?: { id: string; name: string }[] }>()

  /** A site of a new owner with two-factor on, which requires it of the members it is shared with (a viewer and an admin, without it). */
  async function requiringSite() {
    const owner = await createTestAccount(suite.service.app)
    const { recoveryCodes } = await enableTwoFactor(suite.service.app, owner)
    const site = await createTestSite(suite.service.app, owner, { name: 'Locked shop' })
    const viewer = await createTestAccount(suite.service.app)
    const admin = await createTestAccount(suite.service.app)
    await shareSite(suite.service.app, owner, viewer, site.id, 'viewer')
    await shareSite(suite.service.app, owner, admin, site.id, 'admin')
    const turnedOn = await put(owner, site.id, { requireTwoFactor: true })
    expect(turnedOn.statusCode, turnedOn.body).toBe(200)
    expect(turnedOn.json().settings.requireTwoFactor).toBe(true)
    return { owner, site, viewer, admin, ownersCodes: recoveryCodes }
  }

  it.runIf(available)('is off by default, and turned on only by the owner, with two-factor on for the owner\'s own account', async () => {
    const { owner } = suite
    const site = await createTestSite(suite.service.app, owner)
    expect((await get(asScript(owner), `/api/v1/sites/${site.id}`)).json().settings.requireTwoFactor).toBe(false)

    const withoutOwnTwoFactor = await put(owner, site.id, { requireTwoFactor: true })
    expect(withoutOwnTwoFactor.statusCode).toBe(400)
    expect(withoutOwnTwoFactor.json().error).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'settings.requireTwoFactor', message: expect.stringContaining('two-factor authentication on your own account first') }],
    })
    const created = await suite.service.app.inject({ method: 'POST', url: '/api/v1/sites', headers: asBrowser(owner), payload: { name: 'New', settings: { requireTwoFactor: true } } })
    expect(created.statusCode).toBe(400)
    expect(created.json().error.details[0].field).toBe('settings.requireTwoFactor')
    expect((await get(asScript(owner), `/api/v1/sites/${site.id}`)).json().settings.requireTwoFactor).toBe(false)

    // An admin, even with two-factor on, may neither lift the owner's requirement nor impose one.
    const admin = await createTestAccount(suite.service.app)
    await enableTwoFactor(suite.service.app, admin)
    await shareSite(suite.service.app, owner, admin, site.id, 'admin')
    const byAdmin = await put(admin, site.id, { requireTwoFactor: true })
    expect(byAdmin.statusCode).toBe(403)
    expect(byAdmin.json().error).toMatchObject({ code: 'forbidden', message: expect.stringContaining("Only the site's owner") })
    // Sending the value stored changes nothing, and is anyone's to send (a saved form, a config applied again).
    expect((await put(admin, site.id, { requireTwoFactor: false, difficulty: 19 })).statusCode).toBe(200)

    const { site: requiring, owner: other } = await requiringSite()
    const audit = (await get(asBrowser(other), `/api/v1/audit-log?siteId=${requiring.id}&action=site.updated`)).json<{ items: { details: unknown }[] }>().items
    expect(audit[0]?.details).toEqual({ changes: [{ field: 'requireTwoFactor', from: false, to: true }] })
    const createdRequiring = await suite.service.app.inject({ method: 'POST', url: '/api/v1/sites', headers: asBrowser(other), payload: { name: 'Second', settings: { requireTwoFactor: true } } })
    expect(createdRequiring.statusCode, createdRequiring.body).toBe(201)
    expect(createdRequiring.json().settings.requireTwoFactor).toBe(true)
  })

  it.runIf(available)('shuts its members out until they turn two-factor on, by session and by API key, and lets them leave', async () => {
    const { site, owner, viewer, admin } = await requiringSite()
    for (const path of readPaths) {
      for (const headers of [asBrowser(viewer), asScript(viewer), asScript(admin)]) {
        const response = await get(headers, path.replace('{id}', site.id))
        expect(response.statusCode, `${path}: ${response.body}`).toBe(403)
        expect(response.json().error).toMatchObject({ code: 'site_requires_two_factor', message: expect.stringContaining('turn it on for your account') })
      }
      // The owner, and a member that turns it on, read on.
      expect((await get(asScript(owner), path.replace('{id}', site.id))).statusCode, path).toBe(200)
    }
    const change = await put(admin, site.id, { difficulty: 20 })
    expect(change.statusCode).toBe(403)
    expect(change.json().error.code).toBe('site_requires_two_factor')
    expect((await get(asScript(owner), `/api/v1/sites/${site.id}`)).json().settings.difficulty).not.toBe(20)

    // The list leaves the site out and names it apart; another site shared with the viewer stays.
    const open = await createTestSite(suite.service.app, owner, { name: 'Open shop' })
    await shareSite(suite.service.app, owner, viewer, open.id, 'viewer')
    const listed = await siteList(viewer)
    expect(listed.items.map((each) => each.id)).toEqual([open.id])
    expect(listed.sitesRequiringTwoFactor).toEqual([{ id: site.id, name: 'Locked shop' }])
    expect((await get(asScript(viewer), '/api/v1/sites?q=locked')).json().items).toEqual([])
    expect(await siteList(owner)).not.toHaveProperty('sitesRequiringTwoFactor')

    // So does the log of all the account's sites.
    const now = new Date()
    const reference = randomBytes(4).toString('hex')
    await insertVerifications(suite.service.app.database, [
      { id: `${reference}-0000-4000-8000-000000000001`, siteId: site.id, createdAt: now, action: 'block' },
      { id: `${reference}-0000-4000-8000-000000000002`, siteId: open.id, createdAt: now, action: 'allow' },
    ])
    const viewerLog = await get(asScript(viewer), `/api/v1/verifications?reference=${reference}`)
    expect(viewerLog.statusCode, viewerLog.body).toBe(200)
    expect(viewerLog.json<{ items: { siteId: string }[] }>().items.map((row) => row.siteId)).toEqual([open.id])
    const ownerLog = (await get(asScript(owner), `/api/v1/verifications?reference=${reference}`)).json<{ items: { siteId: string }[] }>()
    expect(ownerLog.items.map((row) => row.siteId).sort()).toEqual([site.id, open.id].sort())

    // Leaving needs no two-factor.
    const left = await suite.service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}/members/${admin.id}`, headers: asBrowser(admin) })
    expect(left.statusCode, left.body).toBe(204)

    // Turned on, the site opens at once.
    await enableTwoFactor(suite.service.app, viewer)
    expect((await get(asScript(viewer), `/api/v1/sites/${site.id}`)).statusCode).toBe(200)
    const opened = await siteList(viewer)
    expect(opened.items.map((each) => each.id).sort()).toEqual([site.id, open.id].sort())
    expect(opened).not.toHaveProperty('sitesRequiringTwoFactor')
  })

  it.runIf(available)("keeps the owner in after the owner's own two-factor is turned off, and opens again when the owner lifts it", async () => {
    const owner = await createTestAccount(suite.service.app)
    const { recoveryCodes } = await enableTwoFactor(suite.service.app, owner)
    const site = await createTestSite(suite.service.app, owner)
    const viewer = await createTestAccount(suite.service.app)
    await shareSite(suite.service.app, owner, viewer, site.id, 'viewer')
    expect((await put(owner, site.id, { requireTwoFactor: true })).statusCode).toBe(200)
    const off = await suite.service.app.inject({
      method: 'DELETE',
      url: '/api/v1/me/two-factor',
      headers: asBrowser(owner),
      payload: { password: owner.password, code: recoveryCodes[0] },
    })
    expect(off.statusCode, off.body).toBe(204)
    expect((await get(asScript(owner), `/api/v1/sites/${site.id}`)).statusCode).toBe(200)
    expect((await get(asScript(viewer), `/api/v1/sites/${site.id}`)).statusCode).toBe(403)
    // Lifting it needs no two-factor; null restores the default.
    const lifted = await put(owner, site.id, { requireTwoFactor: null })
    expect(lifted.statusCode, lifted.body).toBe(200)
    expect(lifted.json().settings.requireTwoFactor).toBe(false)
    expect((await get(asScript(viewer), `/api/v1/sites/${site.id}`)).statusCode).toBe(200)
  })

  it.runIf(available)('tells an invitee before accepting, and takes no one without two-factor, the link left unused', async () => {
    const { site, owner } = await requiringSite()
    const invitation = await inviteTo(suite.service.app, owner, site.id, { role: 'viewer' })
    const invitee = await createTestAccount(suite.service.app)
    const preview = await suite.service.app.inject({ method: 'POST', url: '/api/v1/invitations/preview', headers: asBrowser(invitee), payload: { token: invitation.token } })
    expect(preview.json()).toMatchObject({ site: { id: site.id }, twoFactorRequired: true })

    const refused = await acceptInvitation(suite.service.app, invitee, invitation.token)
    expect(refused.statusCode).toBe(403)
    expect(refused.json().error.code).toBe('site_requires_two_factor')
    const pending = (await get(asScript(owner), `/api/v1/sites/${site.id}/invitations`)).json<{ items: { id: string }[] }>().items
    expect(pending.map((each) => each.id)).toContain(invitation.id)

    await enableTwoFactor(suite.service.app, invitee)
    const accepted = await acceptInvitation(suite.service.app, invitee, invitation.token)
    expect(accepted.statusCode, accepted.body).toBe(201)
  })

  it.runIf(available)("shows the owner and admins which members have two-factor on, and not a viewer", async () => {
    const { site, owner, viewer, admin } = await requiringSite()
    const membersAs = async (account: TestAccount) =>
      (await get(asScript(account), `/api/v1/sites/${site.id}/members`)).json<{ items: { accountId: string; role: string; twoFactor?: boolean }[] }>().items
    expect((await membersAs(owner)).map(({ accountId, role, twoFactor }) => ({ accountId, role, twoFactor }))).toEqual([
      { accountId: owner.id, role: 'owner', twoFactor: true },
      { accountId: viewer.id, role: 'viewer', twoFactor: false },
      { accountId: admin.id, role: 'admin', twoFactor: false },
    ])
    await enableTwoFactor(suite.service.app, admin)
    await enableTwoFactor(suite.service.app, viewer)
    expect((await membersAs(admin)).map((member) => member.twoFactor)).toEqual([true, true, true])
    expect((await membersAs(viewer)).every((member) => !('twoFactor' in member))).toBe(true)
  })

  it.runIf(available)('is handed over only to a member with two-factor on, whom the requirement then binds as owner', async () => {
    const { site, owner, viewer, ownersCodes } = await requiringSite()
    // The second factor's code of each attempt: a recovery code, which has no 30-second step to wait for.
    const transfer = (to: TestAccount) =>
      suite.service.app.inject({
        method: 'POST',
        url: `/api/v1/sites/${site.id}/transfer`,
        headers: asBrowser(owner),
        payload: { accountId: to.id, password: owner.password, code: ownersCodes.pop() },
      })
    const refused = await transfer(viewer)
    expect(refused.statusCode).toBe(409)
    expect(refused.json().error).toMatchObject({ code: 'member_lacks_two_factor', message: expect.stringContaining(viewer.email) })
    expect((await get(asScript(owner), `/api/v1/sites/${site.id}`)).json().role).toBe('owner')

    await enableTwoFactor(suite.service.app, viewer)
    const transferred = await transfer(viewer)
    expect(transferred.statusCode, transferred.body).toBe(200)
    expect((await get(asScript(viewer), `/api/v1/sites/${site.id}`)).json()).toMatchObject({ role: 'owner', settings: { requireTwoFactor: true } })
  })
})

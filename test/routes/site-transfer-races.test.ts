import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { asBrowser, asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { shareSite } from '../helpers/site-sharing.js'
import { hasPostgres, hasRedis } from '../helpers/services.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { runBehind } from '../helpers/transaction-pause.js'
import { authenticatorApp, authenticatorCode, enableTwoFactor } from '../helpers/two-factor.js'
import { credentialRateLimits } from '../../src/routes/v1/accounts/rate-limits.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'

/**
 * A transfer of a site's ownership racing the other changes of the site and of its members, each
 * race set up in one order by pausing a request's transaction at one statement. Whatever the
 * order, the site ends with exactly one owner. PostgreSQL only, as site-sharing-races.
 */
describe.runIf(hasPostgres && hasRedis)("races of a site's transfer, on PostgreSQL", () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp({ database: 'postgres', keyValue: 'redis' })
  })
  afterAll(() => service.close())

  const transfer = (siteId: string, owner: TestAccount, member: TestAccount) =>
    service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/transfer`, headers: asBrowser(owner), payload: { accountId: member.id, password: owner.password } })
  /** A site of a new owner, shared with new accounts in `roles`. */
  const sharedSite = async (...roles: ('admin' | 'viewer')[]) => {
    const owner = await createTestAccount(service.app)
    const site = await createTestSite(service.app, owner, { name: 'Changing hands' })
    const members: TestAccount[] = []
    for (const role of roles) {
      const member = await createTestAccount(service.app)
      await shareSite(service.app, owner, member, site.id, role)
      members.push(member)
    }
    return { owner, site, members }
  }
  /** Who owns the site, and every member's role, as the database has them. */
  const rolesOf = async (siteId: string) => {
    const [site] = await service.app.database.query<{ account_id: string }>('SELECT account_id FROM sites WHERE id = $1', [siteId])
    const members = await service.app.database.query<{ account_id: string; role: string }>('SELECT account_id, role FROM site_members WHERE site_id = $1', [siteId])
    return { owner: site?.account_id, members: Object.fromEntries(members.map((member) => [member.account_id, member.role])) }
  }
  const auditActionsOf = async (account: TestAccount, siteId: string) =>
    (await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?siteId=${siteId}`, headers: asBrowser(account) })).json<{ items: { action: string }[] }>().items.map((event) => event.action)

  /**
   * Forces a site change to start anew: each of its attempts' transactions hands the site to the
   * next of `takers` just before it locks the site's row (as a transfer committing at that moment
   * would), so that the owner it locked is not the site's. The change is in the attempt's own
   * transaction, undone with it; once `takers` are used up, an attempt finds the site as it was.
   */
  const handSiteAwayInEachAttempt = (siteId: string, takers: TestAccount[]) => {
    let attempts = 0
    const transaction = service.app.database.transaction.bind(service.app.database)
    const spy = vi.spyOn(service.app.database, 'transaction').mockImplementation((work, options) =>
      transaction(
        (executor) =>
          work({
            async query<Row extends object>(sql: string, params?: readonly unknown[]): Promise<Row[]> {
              if (/FROM sites WHERE id = \$1/.test(sql) && /FOR NO KEY UPDATE/.test(sql)) {
                const taker = takers[attempts++]
                if (taker !== undefined) await executor.query('UPDATE sites SET account_id = $2 WHERE id = $1', [siteId, taker.id])
              }
              return executor.query<Row>(sql, params)
            },
          }),
        options,
      ),
    )
    return { attempts: () => attempts, restore: () => spy.mockRestore() }
  }

  it('refuses to make a member the owner once an admin removed it while the transfer waited: 409 not_a_member, the owner stays', async () => {
    const { owner, site, members: [admin, target] } = await sharedSite('admin', 'viewer')
    // The admin's removal of the target holds the site and is about to delete the membership,
    // when the owner makes the target the owner.
    const [removed, transferred] = await runBehind(
      service.app,
      /DELETE FROM site_members/,
      () => service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}/members/${target!.id}`, headers: asBrowser(admin!) }),
      () => transfer(site.id, owner, target!),
    )

    expect(removed.statusCode, removed.body).toBe(204)
    expect(transferred.statusCode, transferred.body).toBe(409)
    expect(transferred.json().error.code).toBe('not_a_member')
    expect(await rolesOf(site.id)).toEqual({ owner: owner.id, members: { [admin!.id]: 'admin' } })
  })

  it("answers a role change or removal of the member made owner meanwhile with 409 owner_role_fixed: one owner, none lost", async () => {
    for (const change of [{ method: 'PUT' as const, payload: { role: 'viewer' } }, { method: 'DELETE' as const }]) {
      const { owner, site, members: [admin, target] } = await sharedSite('admin', 'admin')
      // The transfer holds the site and the target's membership, and is about to change the owner,
      // when an admin changes the target's role, or removes it.
      const [transferred, changed] = await runBehind(
        service.app,
        /UPDATE sites SET account_id/,
        () => transfer(site.id, owner, target!),
        () => service.app.inject({ url: `/api/v1/sites/${site.id}/members/${target!.id}`, headers: asBrowser(admin!), ...change }),
      )

      expect(transferred.statusCode, transferred.body).toBe(200)
      expect(changed.statusCode, `${change.method}: ${changed.body}`).toBe(409)
      expect(changed.json().error.code).toBe('owner_role_fixed')
      expect(await rolesOf(site.id)).toEqual({ owner: target!.id, members: { [admin!.id]: 'admin', [owner.id]: 'admin' } })
    }
  })

  it('refuses the deletion by the previous owner that waited for the transfer (403), and the transfer that waited for the deletion (404)', async () => {
    const { owner, site, members: [target] } = await sharedSite('admin')
    const [transferred, deleted] = await runBehind(
      service.app,
      /UPDATE sites SET account_id/,
      () => transfer(site.id, owner, target!),
      () => service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}`, headers: asScript(owner) }),
    )
    expect(transferred.statusCode, transferred.body).toBe(200)
    expect(deleted.statusCode, deleted.body).toBe(403)
    expect(await rolesOf(site.id)).toEqual({ owner: target!.id, members: { [owner.id]: 'admin' } })

    const other = await sharedSite('admin')
    const [deletedFirst, transferredLate] = await runBehind(
      service.app,
      /DELETE FROM sites WHERE id/,
      () => service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${other.site.id}`, headers: asScript(other.owner) }),
      () => transfer(other.site.id, other.owner, other.members[0]!),
    )
    expect(deletedFirst.statusCode, deletedFirst.body).toBe(204)
    expect(transferredLate.statusCode, transferredLate.body).toBe(404)
    expect(await rolesOf(other.site.id)).toEqual({ owner: undefined, members: {} })
  })

  it('lets one of two transfers at once win: the other finds its caller an admin (403)', async () => {
    const { owner, site, members: [first, second] } = await sharedSite('admin', 'viewer')
    const answers = await Promise.all([transfer(site.id, owner, first!), transfer(site.id, owner, second!)])
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 403])
    const winner = answers[0]?.statusCode === 200 ? first! : second!
    const { owner: newOwner, members } = await rolesOf(site.id)
    expect(newOwner).toBe(winner.id)
    expect(members[owner.id]).toBe('admin')
    expect(Object.keys(members)).not.toContain(winner.id)
  })

  it("waits for the member's account deletion rather than deadlocking with it: the transfer then finds no member (409)", async () => {
    const { owner, site, members: [target] } = await sharedSite('admin')
    // The deletion holds the target's account row and is about to delete it, and its memberships
    // with it, when the owner makes it the owner: the transfer waits at the account, before the site.
    const [deleted, transferred] = await runBehind(
      service.app,
      /DELETE FROM accounts WHERE id/,
      () => service.app.inject({ method: 'DELETE', url: '/api/v1/me', headers: asBrowser(target!), payload: { password: target!.password } }),
      () => transfer(site.id, owner, target!),
      '%FROM accounts WHERE id = ANY%',
    )
    expect(deleted.statusCode, deleted.body).toBe(204)
    expect(transferred.statusCode, transferred.body).toBe(409)
    expect(transferred.json().error.code).toBe('not_a_member')
    expect(await rolesOf(site.id)).toEqual({ owner: owner.id, members: {} })
  })

  it("writes an admin's change that waited for the transfer in the new owner's log, not the previous owner's", async () => {
    const { owner, site, members: [admin, target] } = await sharedSite('admin', 'admin')
    // The admin's request finds the site under its first owner, and locks that owner's account.
    const [transferred, renamed] = await runBehind(
      service.app,
      /UPDATE sites SET account_id/,
      () => transfer(site.id, owner, target!),
      () => service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asBrowser(admin!), payload: { name: 'Renamed meanwhile' } }),
    )
    expect(transferred.statusCode, transferred.body).toBe(200)
    expect(renamed.statusCode, renamed.body).toBe(200)

    expect((await auditActionsOf(target!, site.id)).slice(0, 2)).toEqual(['site.updated', 'site.ownership_transferred'])
    expect((await auditActionsOf(admin!, site.id))[0]).toBe('site.updated')
    expect((await auditActionsOf(owner, site.id))[0]).toBe('site.ownership_transferred')
  })

  it("answers a change that waited for the transfer with the role the requester has under the site's lock", async () => {
    const { owner, site, members: [target] } = await sharedSite('admin')
    // The target, an admin when its request found the site, is its owner by the time the update is made.
    const [transferred, renamed] = await runBehind(
      service.app,
      /UPDATE sites SET account_id/,
      () => transfer(site.id, owner, target!),
      () => service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asBrowser(target!), payload: { name: 'Renamed by its new owner' } }),
    )
    expect(transferred.statusCode, transferred.body).toBe(200)
    expect(renamed.statusCode, renamed.body).toBe(200)
    expect(renamed.json()).toMatchObject({ name: 'Renamed by its new owner', role: 'owner' })
  })

  it("gives up with 409 conflict when the site's owner changed under the change on each of its attempts", async () => {
    const { owner, site } = await sharedSite()
    const [first, second] = [await createTestAccount(service.app), await createTestAccount(service.app)]
    // Forced: each attempt finds the site handed to another account, so the owner it locked is never the site's.
    const handing = handSiteAwayInEachAttempt(site.id, [first, second, first])
    try {
      const rotated = await service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/secret/rotate`, headers: asScript(owner) })
      expect(rotated.statusCode, rotated.body).toBe(409)
      expect(rotated.json().error).toMatchObject({ code: 'conflict', message: expect.stringContaining('owner changed') })
    } finally {
      handing.restore()
    }
    expect(handing.attempts()).toBe(3)
    // Every attempt was rolled back: the site is its owner's, its secret the one it had.
    expect(await rolesOf(site.id)).toEqual({ owner: owner.id, members: {} })
    expect((await auditActionsOf(owner, site.id))[0]).toBe('site.created')
  })

  it("takes an owner's right code of the second factor once when the transfer starts anew: it transfers, and spends none of the budget of codes", async () => {
    const { owner, site, members: [member] } = await sharedSite('admin')
    const spare = await createTestSite(service.app, owner, { name: 'Kept' })
    const { secret } = await enableTwoFactor(service.app, owner)
    const code = authenticatorCode(secret, 1)
    const { limit, windowMs } = credentialRateLimits.secondFactorPerEmailAndIp
    await startWithinOneWindow(windowMs)
    // The transfer's first attempt finds the site handed to someone else, its second (locking that
    // one) finds it the owner's again: it starts anew twice.
    const handing = handSiteAwayInEachAttempt(site.id, [await createTestAccount(service.app)])
    let transferred
    try {
      transferred = await service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/transfer`, headers: asBrowser(owner), payload: { accountId: member!.id, password: owner.password, code } })
    } finally {
      handing.restore()
    }
    expect(handing.attempts()).toBe(3)
    expect(transferred.statusCode, transferred.body).toBe(200)
    expect(await rolesOf(site.id)).toEqual({ owner: member!.id, members: { [owner.id]: 'admin' } })

    // The code was spent (by the attempt that committed): sent again, it is refused. It and the
    // wrong codes after it are the only ones the owner's budget counts (5 in 15 minutes from an address).
    const handSpare = (attemptCode: string) =>
      service.app.inject({ method: 'POST', url: `/api/v1/sites/${spare.id}/transfer`, headers: asBrowser(owner), payload: { accountId: member!.id, password: owner.password, code: attemptCode } })
    const wrong = authenticatorApp(secret).wrongCode()
    for (const [attempt, attemptCode] of [code, ...Array<string>(limit - 1).fill(wrong)].entries()) {
      const refused = await handSpare(attemptCode)
      expect(refused.statusCode, `attempt ${attempt + 1}: ${refused.body}`).toBe(400)
      expect(refused.json().error.details).toEqual([expect.objectContaining({ field: 'code' })])
    }
    expect((await handSpare(wrong)).statusCode).toBe(429)
  })

  it("gives back an owner's right code of a transfer refused for another reason: the code is neither spent nor counted", async () => {
    const { owner, site, members: [member] } = await sharedSite('admin')
    const spare = await createTestSite(service.app, owner, { name: 'Kept' })
    const outsider = await createTestAccount(service.app)
    const { secret } = await enableTwoFactor(service.app, owner)
    const code = authenticatorCode(secret, 1)
    const { limit, windowMs } = credentialRateLimits.secondFactorPerEmailAndIp
    await startWithinOneWindow(windowMs)
    const handOver = (siteId: string, accountId: string, attemptCode: string) =>
      service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/transfer`, headers: asBrowser(owner), payload: { accountId, password: owner.password, code: attemptCode } })

    // The code is right, the account is no member: refused, and rolled back with the refusal.
    const refused = await handOver(site.id, outsider.id, code)
    expect(refused.statusCode, refused.body).toBe(409)
    expect(refused.json().error.code).toBe('not_a_member')
    // So the same code still makes the transfer the owner meant.
    const transferred = await handOver(site.id, member!.id, code)
    expect(transferred.statusCode, transferred.body).toBe(200)
    expect(await rolesOf(site.id)).toEqual({ owner: member!.id, members: { [owner.id]: 'admin' } })

    // Neither right code counted: the whole budget (5 in 15 minutes from an address) is left for wrong ones.
    const wrong = authenticatorApp(secret).wrongCode()
    for (let attempt = 1; attempt <= limit; attempt++) {
      const guessed = await handOver(spare.id, member!.id, wrong)
      expect(guessed.statusCode, `attempt ${attempt}: ${guessed.body}`).toBe(400)
      expect(guessed.json().error.details).toEqual([expect.objectContaining({ field: 'code' })])
    }
    expect((await handOver(spare.id, member!.id, wrong)).statusCode).toBe(429)
  })
})

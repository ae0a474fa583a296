import type { FastifyInstance, FastifyRequest } from 'fastify'
import { repeatedHourOf } from '../../../domain/audit/audit-actions.js'
import { apiKeyActorOf, requestOriginOf, type AuditActor, type NewAuditEvent } from '../../../domain/audit/audit-event.js'
import { ApiError } from '../../../errors.js'
import type { Site } from '../../../domain/sites/site.js'
import type { SiteAccess, SiteRole } from '../../../domain/sites/site-roles.js'
import { accountOf, allowedRole, refuseWithoutTwoFactor, SITE_NOT_FOUND_MESSAGE } from '../../../plugins/authentication.js'
import type { SqlExecutor } from '../../../storage/ports.js'
import { createAuditLogRepository } from '../../../storage/sql/audit-log-repository.js'
import { createSiteMemberRepository } from '../../../storage/sql/site-member-repository.js'
import { createSiteRepository } from '../../../storage/sql/site-repository.js'
import { createTwoFactorRepository } from '../../../storage/sql/two-factor-repository.js'

/** Who made the request, as the audit log records it: its credential, address and browser. */
export function auditActorOf(request: FastifyRequest): AuditActor {
  const origin = requestOriginOf(request)
  const authentication = request.authentication
  // The account behind the credential, as it is now: a key's name is its member's choice, this says whose it is.
  const account = { accountId: request.account?.id ?? null, email: request.account?.email ?? null }
  if (authentication?.method === 'api-key') {
    return apiKeyActorOf({ id: authentication.apiKeyId, name: authentication.name, prefix: authentication.prefix }, account, origin)
  }
  if (authentication?.method === 'session') {
    return { type: 'session', id: authentication.sessionId, name: request.account?.email ?? null, keyPrefix: null, ...origin, ...account }
  }
  return { type: 'anonymous', id: null, name: null, keyPrefix: null, ...origin }
}

type AuditedEvent = Omit<NewAuditEvent, 'accountId' | 'actor'> & Partial<NewAuditEvent>

const completed = (request: FastifyRequest, event: AuditedEvent): NewAuditEvent => ({
  ...event,
  accountId: event.accountId ?? accountOf(request).id,
  actor: event.actor ?? auditActorOf(request),
})

/**
 * Records what the request did, through `executor`: the transaction of the change itself (an
 * auditedTransaction), so that the event and the change commit together or not at all.
 */
export function recordAudit(executor: SqlExecutor, request: FastifyRequest, event: AuditedEvent): Promise<void> {
  return createAuditLogRepository(executor).record(completed(request, event))
}

/** A site as its events need it: its id and name, and its owner, whose log holds them. */
type AuditedSite = Pick<Site, 'id' | 'name' | 'accountId'>

/**
 * A site's event as the member it concerns reads it in its own log: who did it (the e-mail address
 * or the key's name), not from where. The actor's address and browser are for the site's owner and
 * the actor to read, not for someone another person just removed or demoted.
 */
const withoutOrigin = (actor: AuditActor): AuditActor => ({ ...actor, clientIp: null, userAgent: null })

/**
 * Records what the request did to a site in the log of the site's owner, whoever made it (the
 * owner, or a member: the actor names the member's e-mail address or key), so that the owner's
 * log is the whole story of the site. When a member made it, the member's own log gets a copy:
 * an account's log is also the record of what its own sessions and keys did, which matters most
 * when one of them leaked. `concerning`, a member another account removed or gave another role,
 * gets a copy too (withoutOrigin), so that a site gone from its list is explained in its log; its
 * account row must be locked before the site's (SiteTransactionOptions.alsoLocking), as the
 * event's foreign key locks it. The demo site (no owner) has no log and no members.
 */
export async function recordSiteAudit(
  executor: SqlExecutor,
  request: FastifyRequest,
  event: AuditedEvent & { site: AuditedSite },
  concerning?: string,
): Promise<void> {
  const { accountId: ownerId, ...site } = event.site
  const actorAccountId = accountOf(request).id
  const recorded = { ...event, site }
  await recordAudit(executor, request, { ...recorded, accountId: ownerId ?? actorAccountId })
  if (ownerId !== null && ownerId !== actorAccountId) await recordAudit(executor, request, { ...recorded, accountId: actorAccountId })
  if (concerning !== undefined && concerning !== ownerId && concerning !== actorAccountId) {
    await recordAudit(executor, request, { ...recorded, accountId: concerning, actor: withoutOrigin(recorded.actor ?? auditActorOf(request)) })
  }
}

/** Records an attempt anyone may repeat (a wrong password) in the hour's one event of its kind (recordRepeated). */
export function recordRepeatedAudit(executor: SqlExecutor, request: FastifyRequest, event: AuditedEvent): Promise<void> {
  return createAuditLogRepository(executor).recordRepeated(completed(request, event), repeatedHourOf(Date.now()))
}

/**
 * A transaction for a change of the authenticated account that records its event. It first
 * reads the account's row FOR KEY SHARE, the lock the event's foreign key takes anyway: an account
 * deletion (which locks that row, then deletes the account's sites, keys and sessions) then waits
 * for this transaction, where otherwise each could hold what the other waits for (this one a site
 * or a session, the deletion the account) and PostgreSQL would end one of them with an error.
 * 401 when the account is gone meanwhile.
 */
export function auditedTransaction<Result>(app: FastifyInstance, request: FastifyRequest, work: (transaction: SqlExecutor) => Promise<Result>): Promise<Result> {
  return app.database.transaction(async (transaction) => {
    const rows = await transaction.query('SELECT 1 FROM accounts WHERE id = $1 FOR KEY SHARE', [accountOf(request).id])
    if (rows.length === 0) throw new ApiError('unauthorized', 'The account was deleted.')
    return work(transaction)
  })
}

/**
 * What a change of a site asks of the requester: a SiteAccess, checked again under the site's
 * lock, or `invitee` (accepting an invitation: the invitation is what lets the account in).
 */
export type SiteChangeAccess = SiteAccess | 'invitee'

/** Found under the site's lock: the site has another owner than the one locked before it (a transfer committed meanwhile). */
class OwnerChanged extends Error {
  constructor(readonly ownerId: string | null) {
    super('the site changed owner')
  }
}

/** How often a change starts again for a site whose owner changed under it: a transfer is rare, two in a row while one request waits rarer still. */
const OWNER_CHANGE_ATTEMPTS = 3

export interface SiteTransactionOptions {
  /**
   * Other accounts whose rows the change needs (a transfer's new owner, whose log gets the
   * event), locked FOR KEY SHARE with the owner's, before the site: 404 is not said for them, the
   * work reads what it needs of them.
   */
  alsoLocking?: readonly string[]
  /**
   * Opens the transaction, which must have locked the requester's account row (FOR KEY SHARE or
   * stronger) and answer 401 when it is gone: auditedTransaction unless told (a change confirmed
   * by the password and second factor runs in withSecondFactor's transaction, which locks it).
   */
  transaction?: <Result>(work: (transaction: SqlExecutor) => Promise<Result>) => Promise<Result>
}

/** The requester's role as read again under the site's lock: none for an invitee (not a member yet). */
export type LockedRole<Access extends SiteChangeAccess> = Access extends 'invitee' ? undefined : SiteRole

/** What `work` is given: the transaction, the site as locked, the requester's role under that lock. */
export type SiteChangeWork<Access extends SiteChangeAccess, Result> = (transaction: SqlExecutor, site: Site, role: LockedRole<Access>) => Promise<Result>

/**
 * An auditedTransaction for a change of a site, which may be shared. Its locks are always taken
 * in one order, accounts, then the site, then the site's members and invitations, the order an
 * account's and a site's deletion take them in (DELETE FROM sites locks the site's row, then its
 * cascades lock the rows that refer to it), so that no two of them wait for each other in a cycle
 * (PostgreSQL would end one with a deadlock error):
 * 1. The requester's account row FOR KEY SHARE (auditedTransaction), and the owner's, whose log
 *    gets the event (recordSiteAudit): 404 when the owner, and so the site, is gone. Then those of
 *    `alsoLocking`.
 * 2. The site's row FOR NO KEY UPDATE: 404 when it is gone. Every change of one site queues
 *    here, so a count and the insert it allows (members, pending invitations) are exact, and a
 *    change that read the requester's role before (findSite) cannot commit after the requester was
 *    removed or made a viewer. Rows that merely refer to the site (Siteverify's counts, webhook
 *    deliveries) take FOR KEY SHARE, which this lock lets through. Should the site have another
 *    owner by then (a transfer committed while this waited), the transaction is rolled back and
 *    begun again with that owner: its account must be locked before the site, and its log gets
 *    the event.
 * 3. The requester's role, read again under that lock, must still allow `access` (404 or 403 as
 *    findSite answers), unless it is an invitee's; so must the site's requirement of two-factor
 *    authentication (refuseWithoutTwoFactor): turned on meanwhile, it refuses the change.
 * `work` gets the site as locked: its events go to that site's owner (recordSiteAudit with it);
 * and the requester's role read under that lock (the one to answer: a transfer may have changed
 * it since findSite), none for an invitee.
 * Should the owner change under it on each of OWNER_CHANGE_ATTEMPTS attempts, 409 conflict
 * (siteChangeConflicts documents it for the routes that use this).
 */
export async function auditedSiteTransaction<Result, Access extends SiteChangeAccess>(
  app: FastifyInstance,
  request: FastifyRequest,
  site: Pick<Site, 'id' | 'accountId'>,
  access: Access,
  work: SiteChangeWork<Access, Result>,
  options: SiteTransactionOptions = {},
): Promise<Result> {
  let ownerId = site.accountId
  for (let attempt = 1; ; attempt++) {
    try {
      return await lockedSiteTransaction(app, request, { id: site.id, accountId: ownerId }, access, work, options)
    } catch (error) {
      if (!(error instanceof OwnerChanged)) throw error
      if (attempt === OWNER_CHANGE_ATTEMPTS) throw new ApiError('conflict', "The site's owner changed while this request waited; send it again.")
      ownerId = error.ownerId
    }
  }
}

function lockedSiteTransaction<Result, Access extends SiteChangeAccess>(
  app: FastifyInstance,
  request: FastifyRequest,
  site: Pick<Site, 'id' | 'accountId'>,
  access: Access,
  work: SiteChangeWork<Access, Result>,
  options: SiteTransactionOptions,
): Promise<Result> {
  const ownerId = site.accountId
  const requesterId = accountOf(request).id
  const inTransaction = options.transaction ?? (<Inner>(inner: (transaction: SqlExecutor) => Promise<Inner>) => auditedTransaction(app, request, inner))
  return inTransaction(async (transaction) => {
    if (ownerId !== null && ownerId !== requesterId) {
      const owners = await transaction.query('SELECT 1 FROM accounts WHERE id = $1 FOR KEY SHARE', [ownerId])
      if (owners.length === 0) throw new ApiError('not_found', SITE_NOT_FOUND_MESSAGE)
    }
    const others = (options.alsoLocking ?? []).filter((id) => id !== ownerId && id !== requesterId)
    if (others.length > 0) await transaction.query('SELECT 1 FROM accounts WHERE id = ANY($1::uuid[]) ORDER BY id FOR KEY SHARE', [others])
    const locked = await createSiteRepository(transaction).findByIdForUpdate(site.id)
    if (locked === undefined) throw new ApiError('not_found', SITE_NOT_FOUND_MESSAGE)
    if (locked.accountId !== ownerId) throw new OwnerChanged(locked.accountId)
    if (access === 'invitee') return work(transaction, locked, undefined as LockedRole<Access>)
    const role = allowedRole(locked.accountId === requesterId ? 'owner' : await createSiteMemberRepository(transaction).findRole(locked.id, requesterId), access)
    await refuseWithoutTwoFactor(locked, role, access, () => createTwoFactorRepository(transaction).isEnabled(requesterId))
    return work(transaction, locked, role as LockedRole<Access>)
  })
}

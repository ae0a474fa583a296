/**
 * npm run account -- create <e-mail address>
 * npm run account -- set-password <e-mail address>
 * npm run account -- disable-two-factor <e-mail address>
 * npm run account -- disable <e-mail address>
 * npm run account -- enable <e-mail address>
 * npm run account -- end-sessions <e-mail address>
 * npm run account -- delete <e-mail address>
 *
 * Accounts made or mended by the server's operator, on the database the server uses (DATABASE_URL,
 * or the embedded one in DATA_DIR, which only one process may hold: stop the server first). The
 * password is read from standard input (one line, or the same line twice), or asked for twice
 * without echo on a terminal.
 * `create` works whatever SIGNUPS says; `set-password` is the way back into an account whose
 * password is lost (there is no e-mail reset) and ends all of the account's sessions;
 * `disable-two-factor` is the way back into an account whose authenticator app and recovery codes
 * are lost (after the operator has made sure who is asking), and leaves its sessions.
 * `disable` is for someone who left: the account can no longer log in, its sessions end and its API
 * keys are refused from the next request on, on every instance, and the invitations it made are
 * revoked; `enable` undoes all but the invitations (its keys work again). `end-sessions` logs the account out everywhere and leaves its API keys (revoked on its
 * API keys page, or refused with `disable`). `delete` deletes it as DELETE /api/v1/me does, with its
 * sites, unless one of them is shared with other members. Each but `delete` is recorded in the
 * account's audit log (actor `operator`); `delete` takes the log with the account.
 */
import { loadConfig } from '../src/config.js'
import { isEmailAddress, normalizeEmailAddress } from '../src/domain/accounts/email-address.js'
import { findPasswordProblem, hashPassword } from '../src/domain/accounts/password.js'
import { migrate } from '../src/storage/migrate.js'
import { OPERATOR_ACTOR } from '../src/domain/audit/audit-event.js'
import type { SqlDatabase } from '../src/storage/ports.js'
import { createAccountRepository, type AccountWithPassword } from '../src/storage/sql/account-repository.js'
import { createAuditLogRepository } from '../src/storage/sql/audit-log-repository.js'
import { createSessionRepository } from '../src/storage/sql/session-repository.js'
import { createSiteInvitationRepository } from '../src/storage/sql/site-invitation-repository.js'
import { createTwoFactorRepository } from '../src/storage/sql/two-factor-repository.js'
import { createVerificationQueryRepository } from '../src/storage/sql/verification-query-repository.js'
import { describeDatabase, openServiceDatabase, readSecretInput, runOperatorScript, UsageError } from './operator-input.js'

const USAGE = [
  'usage: npm run account -- create <e-mail address>',
  '       npm run account -- set-password <e-mail address>',
  '       npm run account -- disable-two-factor <e-mail address>',
  '       npm run account -- disable <e-mail address>       (no log-in; ends its sessions, refuses its API keys, revokes its invitations)',
  '       npm run account -- enable <e-mail address>        (undoes disable; its API keys work again)',
  '       npm run account -- end-sessions <e-mail address>  (logs it out everywhere; its API keys stay)',
  '       npm run account -- end-sessions --all            (logs every account out everywhere, as after a restore; API keys stay)',
  '       npm run account -- delete <e-mail address>        (with its sites, none shared with other members; cannot be undone)',
  'create and set-password ask for the password twice, without echo, on a terminal; otherwise they read it from',
  'standard input, one line (echo "$PASSWORD" | npm run account -- create owner@example.com).',
  'The database is the server\'s (DATABASE_URL, or DATA_DIR\'s embedded one: stop the server first).',
].join('\n')

/** What `work` answers on the server's database (which must exist), migrated. */
async function withDatabase(work: (database: SqlDatabase, where: string) => Promise<string>): Promise<string> {
  const config = loadConfig()
  const database = await openServiceDatabase(config, { create: false })
  try {
    await migrate(database)
    return await work(database, describeDatabase(config))
  } finally {
    await database.close()
  }
}

/** What `work` answers on the account with this address, in the server's database (which must exist). */
function withAccount(email: string, work: (database: SqlDatabase, account: AccountWithPassword, where: string) => Promise<string>): Promise<string> {
  return withDatabase(async (database, where) => {
    const account = await createAccountRepository(database).findByEmail(email)
    if (account === undefined) throw new UsageError(`no account has the address ${email} in ${where}`)
    return work(database, account, where)
  })
}

/** Turns the account's two-factor authentication off, recording it as the operator's act. */
const disableTwoFactor = (email: string) => withAccount(email, async (database, account, where) => {
  const disabled = await database.transaction(async (transaction) => {
    const wasOn = await createTwoFactorRepository(transaction).disable(account.id)
    if (wasOn) await createAuditLogRepository(transaction).record({ accountId: account.id, action: 'account.two_factor_disabled', actor: OPERATOR_ACTOR })
    return wasOn
  })
  return disabled
    ? `turned two-factor authentication off for ${account.email} in ${where}; its next log-in needs only the password`
    : `two-factor authentication was off already for ${account.email} in ${where}`
})

/**
 * Disables the account (it logs in no more, its sessions end, its API keys are refused: every
 * instance reads the flag with the session or key on each request) or enables it again. Disabling
 * also revokes the invitations it made, each recorded in the site owner's log as the removal of a
 * member records them: enabling does not bring them back, so that a link kept by someone who left
 * lets no one in, then or later.
 */
const setDisabled = (email: string, disabled: boolean) => withAccount(email, async (database, account, where) => {
  const outcome = await database.transaction(async (transaction) => {
    if (!(await createAccountRepository(transaction).setDisabled(account.id, disabled))) return undefined
    const endedSessions = disabled ? await createSessionRepository(transaction).deleteAllOf(account.id) : 0
    const revoked = disabled ? await createSiteInvitationRepository(transaction).deleteAllInvitedBy(account.id) : []
    const auditLog = createAuditLogRepository(transaction)
    await auditLog.record({
      accountId: account.id,
      action: disabled ? 'account.disabled' : 'account.enabled',
      actor: OPERATOR_ACTOR,
      ...(disabled ? { details: { endedSessions } } : {}),
    })
    for (const { id, role, email: invitee, site: { accountId: ownerId, ...site } } of revoked) {
      if (ownerId === null) continue
      const details = { invitationId: id, role, email: invitee, invitedBy: account.email, reason: 'inviter_disabled' }
      await auditLog.record({ accountId: ownerId, action: 'site.invitation_revoked', actor: OPERATOR_ACTOR, site, details })
    }
    return { endedSessions, revokedInvitations: revoked.length }
  })
  if (outcome === undefined) return `${account.email} was ${disabled ? 'disabled' : 'enabled'} already in ${where}`
  return disabled
    ? `disabled ${account.email} in ${where}: it can no longer log in, ${outcome.endedSessions} session(s) ended, ${outcome.revokedInvitations} pending invitation(s) it made revoked ` +
        'and its API keys are refused (enable undoes all but the invitations; delete removes it)'
    : `enabled ${account.email} in ${where}: it may log in again, and its API keys work again`
})

/** Logs the account out everywhere; its API keys stay (the owner revokes them, or disable refuses them). */
const endSessions = (email: string) => withAccount(email, async (database, account, where) => {
  const ended = await database.transaction(async (transaction) => {
    const endedSessions = await createSessionRepository(transaction).deleteAllOf(account.id)
    // Copies of its known-browser cookies no longer spare anyone its log-in limit.
    await createAccountRepository(transaction).forgetKnownBrowsers(account.id)
    if (endedSessions > 0) await createAuditLogRepository(transaction).record({ accountId: account.id, action: 'account.sessions_ended', actor: OPERATOR_ACTOR, details: { endedSessions } })
    return endedSessions
  })
  return `ended ${ended} session(s) of ${account.email} in ${where}; its API keys still work (disable refuses them too)`
})

/**
 * Logs every account out everywhere, each recorded in its audit log as end-sessions records one:
 * after a restore, which revives the sessions ended since the backup was taken (the README's
 * "Restoring"), or when the sessions table may have leaked. API keys stay: which of them were
 * revoked since the backup, the restored database cannot tell.
 */
const endEveryonesSessions = () => withDatabase(async (database, where) => {
  const ended = await database.transaction(async (transaction) => {
    const byAccount = await createSessionRepository(transaction).deleteEveryone()
    await createAccountRepository(transaction).forgetEveryonesKnownBrowsers()
    const auditLog = createAuditLogRepository(transaction)
    for (const { accountId, ended: endedSessions } of byAccount) {
      await auditLog.record({ accountId, action: 'account.sessions_ended', actor: OPERATOR_ACTOR, details: { endedSessions } })
    }
    return byAccount
  })
  const sessions = ended.reduce((sum, account) => sum + account.ended, 0)
  return `ended ${sessions} session(s) of ${ended.length} account(s) in ${where}: everyone logs in again; API keys still work (their owners revoke any not to trust)`
})

/**
 * Deletes the account as DELETE /api/v1/me does (its sites, stats, webhooks, sessions, API keys
 * and audit log with it), but refuses while it owns a site other members share, which they would
 * lose with it. The sites' verification logs go with the server's next retention sweep; running
 * instances may still accept a deleted site's keys for the half minute they cache a site.
 */
const deleteAccount = (email: string) => withAccount(email, async (database, account, where) => {
  const { siteIds } = await database.transaction(async (transaction) => {
    const logQueries = createVerificationQueryRepository(transaction)
    return createAccountRepository(transaction).delete(account.id, async (ids) => {
      const shared = await transaction.query<{ name: string }>(
        'SELECT name FROM sites WHERE id = ANY($1::uuid[]) AND EXISTS (SELECT 1 FROM site_members m WHERE m.site_id = sites.id) ORDER BY name',
        [ids],
      )
      if (shared.length > 0) {
        throw new UsageError(
          `${account.email} owns ${shared.length} site(s) shared with other members: ${shared.map((site) => site.name).join(', ')}. ` +
            'Its owner makes another member owner of each on the site\'s Members page first (or disable the account instead, which keeps the sites)',
        )
      }
      for (const siteId of ids) await logQueries.deleteRollupsOf(siteId)
    })
  })
  return `deleted ${account.email} in ${where}, with its ${siteIds.length} site(s), sessions and API keys`
})

const commands: Record<string, ((email: string) => Promise<string>) | undefined> = {
  'disable-two-factor': disableTwoFactor,
  disable: (email) => setDisabled(email, true),
  enable: (email) => setDisabled(email, false),
  'end-sessions': endSessions,
  delete: deleteAccount,
}

async function run(command: string | undefined, address: string | undefined): Promise<string> {
  const accountCommand = command === undefined || !Object.hasOwn(commands, command) ? undefined : commands[command]
  if ((command !== 'create' && command !== 'set-password' && accountCommand === undefined) || address === undefined) throw new UsageError(USAGE)
  if (command === 'end-sessions' && address === '--all') return endEveryonesSessions()
  const email = normalizeEmailAddress(address)
  if (!isEmailAddress(email)) throw new UsageError(`${JSON.stringify(address)} is not an e-mail address`)
  if (accountCommand !== undefined) return accountCommand(email)
  const config = loadConfig()
  const password = await readSecretInput('password', (value) => findPasswordProblem(value, email))
  const passwordHash = await hashPassword(password)

  // A first account may come before the first start (the database made here); a password is set in one that exists.
  const database = await openServiceDatabase(config, { create: command === 'create' })
  const where = describeDatabase(config)
  try {
    await migrate(database)
    const accounts = createAccountRepository(database)
    if (command === 'create') {
      const account = await database.transaction(async (transaction) => {
        const created = await createAccountRepository(transaction).create(email, passwordHash)
        if (created !== undefined) await createAuditLogRepository(transaction).record({ accountId: created.id, action: 'account.created', actor: OPERATOR_ACTOR })
        return created
      })
      if (account === undefined) throw new UsageError(`an account with the address ${email} exists already (set its password with set-password)`)
      return `created the account ${account.email} (${account.id}) in ${where}`
    }
    const account = await accounts.findByEmail(email)
    if (account === undefined) throw new UsageError(`no account has the address ${email} in ${where}`)
    const ended = await database.transaction(async (transaction) => {
      await createAccountRepository(transaction).setPasswordHash(account.id, passwordHash)
      const endedSessions = await createSessionRepository(transaction).deleteAllOf(account.id)
      await createAuditLogRepository(transaction).record({ accountId: account.id, action: 'account.password_set', actor: OPERATOR_ACTOR, details: { endedSessions } })
      return endedSessions
    })
    // A passkey is no password: a holder of one the owner no longer trusts logs in still.
    return `set the password of ${account.email} in ${where}; ended ${ended} session(s). Its passkeys were kept and still log in: the owner removes any not to trust on the Account page`
  } finally {
    await database.close()
  }
}

await runOperatorScript('account', async () => {
  const command = process.argv[2]
  return command === '--help' || command === '-h' ? USAGE : run(command, process.argv[3])
})

/**
 * npm run account -- create <e-mail address>
 * npm run account -- set-password <e-mail address>
 * npm run account -- disable-two-factor <e-mail address>
 *
 * Accounts made or mended by the server's operator, on the database the server uses (DATABASE_URL,
 * or the embedded one in DATA_DIR, which only one process may hold: stop the server first). The
 * password is read from standard input (one line, or the same line twice), or asked for twice
 * without echo on a terminal.
 * `create` works whatever SIGNUPS says; `set-password` is the way back into an account whose
 * password is lost (there is no e-mail reset) and ends all of the account's sessions;
 * `disable-two-factor` is the way back into an account whose authenticator app and recovery codes
 * are lost (after the operator has made sure who is asking), and leaves its sessions.
 */
import { ConfigError, loadConfig } from '../src/config.js'
import { isEmailAddress, normalizeEmailAddress } from '../src/domain/accounts/email-address.js'
import { findPasswordProblem, hashPassword } from '../src/domain/accounts/password.js'
import { StartupError } from '../src/startup-error.js'
import { migrate } from '../src/storage/migrate.js'
import { OPERATOR_ACTOR } from '../src/domain/audit/audit-event.js'
import { createAccountRepository } from '../src/storage/sql/account-repository.js'
import { createAuditLogRepository } from '../src/storage/sql/audit-log-repository.js'
import { createSessionRepository } from '../src/storage/sql/session-repository.js'
import { createTwoFactorRepository } from '../src/storage/sql/two-factor-repository.js'
import { describeDatabase, openServiceDatabase, readSecretInput, UsageError } from './operator-input.js'

const USAGE = [
  'usage: npm run account -- create <e-mail address>',
  '       npm run account -- set-password <e-mail address>',
  '       npm run account -- disable-two-factor <e-mail address>',
  'create and set-password ask for the password twice, without echo, on a terminal; otherwise they read it from',
  'standard input, one line (echo "$PASSWORD" | npm run account -- create owner@example.com).',
  'The database is the server\'s (DATABASE_URL, or DATA_DIR\'s embedded one: stop the server first).',
].join('\n')

/** Turns the account's two-factor authentication off, recording it as the operator's act. */
async function disableTwoFactor(email: string): Promise<string> {
  const config = loadConfig()
  const database = await openServiceDatabase(config, { create: false })
  const where = describeDatabase(config)
  try {
    await migrate(database)
    const account = await createAccountRepository(database).findByEmail(email)
    if (account === undefined) throw new UsageError(`no account has the address ${email} in ${where}`)
    const disabled = await database.transaction(async (transaction) => {
      const wasOn = await createTwoFactorRepository(transaction).disable(account.id)
      if (wasOn) await createAuditLogRepository(transaction).record({ accountId: account.id, action: 'account.two_factor_disabled', actor: OPERATOR_ACTOR })
      return wasOn
    })
    return disabled
      ? `turned two-factor authentication off for ${account.email} in ${where}; its next log-in needs only the password`
      : `two-factor authentication was off already for ${account.email} in ${where}`
  } finally {
    await database.close()
  }
}

async function run(command: string | undefined, address: string | undefined): Promise<string> {
  if ((command !== 'create' && command !== 'set-password' && command !== 'disable-two-factor') || address === undefined) throw new UsageError(USAGE)
  const email = normalizeEmailAddress(address)
  if (!isEmailAddress(email)) throw new UsageError(`${JSON.stringify(address)} is not an e-mail address`)
  if (command === 'disable-two-factor') return disableTwoFactor(email)
  const config = loadConfig()
  const password = await readSecretInput('password', findPasswordProblem)
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

try {
  const command = process.argv[2]
  process.stdout.write(`${command === '--help' || command === '-h' ? USAGE : await run(command, process.argv[3])}\n`)
} catch (error) {
  if (error instanceof UsageError || error instanceof StartupError || error instanceof ConfigError) {
    process.stderr.write(`tollgate account: ${error.message}\n`)
    process.exit(error instanceof ConfigError ? 78 : 1)
  }
  throw error
}

/**
 * npm run secret -- check
 * npm run secret -- change    (the new secret asked twice on a terminal, or one line of standard input)
 * npm run secret -- adopt
 *
 * The server's secret against the database it goes with (migration 012). `check` tells whether
 * TOLLGATE_SECRET (or, unset, DATA_DIR/secret) is the database's. `change` moves the database to a
 * new secret: every site's webhook secret (and the one it replaced, while that still signs) and every account's authenticator secret (two-factor
 * authentication) is decrypted under the current secret and sealed under the new one, and the database's key check becomes the new secret's, all in one transaction;
 * when the secret lives in DATA_DIR/secret, that file then holds the new one. Stop every instance
 * first (an instance left running with the old secret would seal webhook secrets the others cannot
 * read), then start them all with the new secret. `adopt` makes the current secret the database's
 * without anything sealed again, for when the database's own secret is lost: webhook secrets sealed
 * under that one stay unreadable (it names their sites), to be set again; replaced webhook secrets
 * still signing beside them that it cannot read are dropped (it names those sites too).
 */
import { rename, rm, writeFile } from 'node:fs/promises'
import { loadConfig, secretProblemOf } from '../src/config.js'
import { openTotpSecret, sealTotpSecret } from '../src/domain/accounts/two-factor.js'
import { decryptSecret, encryptSecret } from '../src/domain/secret-box.js'
import { createKeyRing, findSecret, keyCheckOf, storedSecretFile, type KeyRing } from '../src/secret.js'
import { migrate } from '../src/storage/migrate.js'
import type { SqlDatabase, SqlExecutor } from '../src/storage/ports.js'
import { readKeyCheck, sameKeyCheck, writeKeyCheck } from '../src/storage/sql/server-key-check.js'
import { createSiteRepository } from '../src/storage/sql/site-repository.js'
import { createTwoFactorRepository } from '../src/storage/sql/two-factor-repository.js'
import { describeDatabase, openServiceDatabase, readSecretInput, runOperatorScript, UsageError } from './operator-input.js'

const USAGE = [
  'usage: npm run secret -- check | change | adopt',
  '  check   whether TOLLGATE_SECRET (or, unset, DATA_DIR/secret) is the secret the database goes with',
  '  change  moves the database to a new secret (every instance stopped first); asks for it twice, without echo,',
  '          on a terminal, otherwise reads it from standard input, one line (written to a file first, which keeps it: npm run secret -- change < secret.new)',
  '  adopt   makes the current secret the database\'s when its own is lost, and names what stays unreadable',
].join('\n')
const CURRENT = 'TOLLGATE_SECRET (or, unset, DATA_DIR/secret)'

/**
 * Runs `work` on the service's database. `change` and `adopt` (every instance stopped) make an
 * embedded one that is not there yet and bring the schema up to date first; `check` only reads a
 * database that exists, so that it can run beside the instances of the release before, ahead of
 * a rolling deploy, and so that a mistyped DATA_DIR is no database that "goes with no secret yet".
 */
async function withDatabase<T>(work: (database: SqlDatabase) => Promise<T>, options: { readOnly: boolean } = { readOnly: false }): Promise<T> {
  const database = await openServiceDatabase(loadConfig(), { create: !options.readOnly })
  try {
    if (!options.readOnly) await migrate(database)
    return await work(database)
  } finally {
    await database.close()
  }
}

async function check(current: KeyRing): Promise<string> {
  const where = describeDatabase(loadConfig())
  const stored = await withDatabase((database) => readStoredKeyCheck(database, where), { readOnly: true })
  if (stored === undefined) return `${where} goes with no secret yet: the first instance to start records its own`
  if (!sameKeyCheck(stored, current)) throw new UsageError(`${CURRENT} is not the secret ${where} goes with`)
  return `${CURRENT} is the secret ${where} goes with`
}

/** The stored key check; a database without the service's tables is no database of the service (yet). */
async function readStoredKeyCheck(database: SqlDatabase, where: string): ReturnType<typeof readKeyCheck> {
  try {
    return await readKeyCheck(database)
  } catch (error) {
    // undefined_table: no schema, or one from before migration 012 (the key check's).
    if ((error as { code?: string }).code === '42P01') throw new UsageError(`${where} holds no Tollgate schema with a secret check yet (start the service once, or check DATABASE_URL and DATA_DIR)`)
    throw error
  }
}

/**
 * What is sealed under a key of the server's secret, to be sealed again when it changes: the sites'
 * webhook secrets, and the accounts' authenticator secrets (two-factor authentication).
 */
interface SealedKind {
  /** Every sealed value of the kind, with whose it is (for the operator), locked until the transaction ends. */
  lock(transaction: SqlExecutor): Promise<{ id: string; owner: string; sealed: string }[]>
  open(keyRing: KeyRing, sealed: string, id: string): string
  seal(keyRing: KeyRing, plaintext: string, id: string): string
  store(transaction: SqlExecutor, id: string, sealed: string): Promise<void>
  /**
   * Forgets a value the current secret cannot open, where doing without it is harmless (the
   * overlap of a replaced webhook secret ends early); without, such values are kept and named.
   */
  drop?(transaction: SqlExecutor, id: string): Promise<void>
  /** The output's line for the values the current secret cannot open. */
  unreadableLine(owners: string[]): string
}

/** The site's name the dashboard shows beside its id, quoted (it may hold commas) and escaped (control characters). */
const siteOwner = (site: { id: string; name: string }) => `${JSON.stringify(site.name)} (${site.id})`

/** A site's webhook secret sealed in `column` (the current one, or the one it replaced), as the service seals it. */
function sealedWebhookSecretIn(column: 'webhook_secret_ciphertext' | 'previous_webhook_secret_ciphertext'): Pick<SealedKind, 'lock' | 'open' | 'seal' | 'store'> {
  return {
    lock: async (transaction) => {
      const sites = await transaction.query<{ id: string; name: string; sealed: string }>(
        `SELECT id, name, ${column} AS sealed FROM sites WHERE ${column} IS NOT NULL ORDER BY id FOR UPDATE`,
      )
      return sites.map((site) => ({ id: site.id, owner: siteOwner(site), sealed: site.sealed }))
    },
    open: (keyRing, sealed, siteId) => decryptSecret(keyRing.keyFor('webhook-encryption'), sealed, siteId),
    seal: (keyRing, plaintext, siteId) => encryptSecret(keyRing.keyFor('webhook-encryption'), plaintext, siteId),
    store: async (transaction, siteId, sealed) => {
      await transaction.query(`UPDATE sites SET ${column} = $2 WHERE id = $1`, [siteId, sealed])
    },
  }
}
const replaced = sealedWebhookSecretIn('previous_webhook_secret_ciphertext')

const sealedKinds: { name: string; kind: SealedKind }[] = [
  {
    name: 'webhook secret(s)',
    kind: {
      ...sealedWebhookSecretIn('webhook_secret_ciphertext'),
      unreadableLine: (sites) =>
        `${sites.length} site(s) hold a webhook secret the current secret could not decrypt (set it again in the dashboard): ${sites.join(', ')}`,
    },
  },
  {
    // A webhook secret replaced less than 24 hours ago, still signing beside the new one (migration 034).
    name: 'replaced webhook secret(s)',
    kind: {
      ...replaced,
      lock: async (transaction) => {
        // One whose overlap is over signs nothing any more: it goes rather than being sealed again.
        await createSiteRepository(transaction).clearExpiredPreviousWebhookSecrets()
        return replaced.lock(transaction)
      },
      drop: async (transaction, siteId) => {
        await transaction.query('UPDATE sites SET previous_webhook_secret_ciphertext = NULL, previous_webhook_secret_expires_at = NULL WHERE id = $1', [siteId])
      },
      unreadableLine: (sites) =>
        `${sites.length} site(s) held a replaced webhook secret the current secret could not decrypt, still signing beside the new one: ` +
        `it no longer does (receivers verify with the site's current webhook secret): ${sites.join(', ')}`,
    },
  },
  {
    name: 'authenticator secret(s)',
    kind: {
      lock: (transaction) =>
        transaction.query('SELECT id, email AS owner, totp_secret_sealed AS sealed FROM accounts WHERE totp_secret_sealed IS NOT NULL ORDER BY id FOR UPDATE'),
      open: (keyRing, sealed, accountId) => openTotpSecret(keyRing.keyFor('two-factor'), accountId, sealed),
      seal: (keyRing, plaintext, accountId) => sealTotpSecret(keyRing.keyFor('two-factor'), accountId, plaintext),
      store: (transaction, accountId, sealed) => createTwoFactorRepository(transaction).reseal(accountId, sealed),
      unreadableLine: (accounts) =>
        `${accounts.length} account(s) hold an authenticator secret the current secret could not decrypt (they log in with a recovery code, ` +
        `or npm run account -- disable-two-factor): ${accounts.join(', ')}`,
    },
  },
]

/** The value in its box, or undefined when `keyRing` cannot open it (sealed under another secret). */
function openSealed(kind: SealedKind, keyRing: KeyRing, sealed: string, id: string): string | undefined {
  try {
    return kind.open(keyRing, sealed, id)
  } catch {
    return undefined
  }
}

/**
 * Idempotency-Key answers are sealed, and their requests' bodies keyed, under the secret: no other
 * secret opens or recognises them. They are a 24-hour cache of retries, dropped when the secret
 * changes (a retry then creates anew) rather than left to fail a retry with a 500 or a 422.
 */
async function forgetIdempotencyKeys(transaction: SqlExecutor): Promise<void> {
  await transaction.query('DELETE FROM idempotency_keys')
}

async function adopt(current: KeyRing, database: SqlDatabase): Promise<string> {
  return database.transaction(async (transaction) => {
    const stored = await readKeyCheck(transaction, { forUpdate: true })
    if (sameKeyCheck(stored, current)) return `${CURRENT} is already the secret this database goes with`
    const unreadableLines: string[] = []
    for (const { kind } of sealedKinds) {
      const unreadable = (await kind.lock(transaction)).filter((row) => openSealed(kind, current, row.sealed, row.id) === undefined)
      for (const row of unreadable) await kind.drop?.(transaction, row.id)
      if (unreadable.length > 0) unreadableLines.push(kind.unreadableLine(unreadable.map((row) => row.owner)))
    }
    await forgetIdempotencyKeys(transaction)
    await writeKeyCheck(transaction, keyCheckOf(current))
    return [`the database now goes with ${CURRENT}; instances with another secret stop at their next start in production`, ...unreadableLines].join('\n')
  })
}

function findSecretProblem(next: string, current: string): string | undefined {
  if (next === current) return 'is the current one'
  return secretProblemOf(next)
}

/**
 * Seals every webhook and authenticator secret again; returns how many of each moved, and lines
 * naming those the current secret could not open.
 */
async function change(current: KeyRing, next: KeyRing, database: SqlDatabase): Promise<{ sealed: string[]; unreadableLines: string[] }> {
  return database.transaction(async (transaction) => {
    const stored = await readKeyCheck(transaction, { forUpdate: true })
    if (stored !== undefined && !sameKeyCheck(stored, current)) {
      throw new UsageError(`${CURRENT} is not the secret this database goes with; nothing was changed`)
    }
    const sealed: string[] = []
    const unreadableLines: string[] = []
    for (const { name, kind } of sealedKinds) {
      const unreadable: string[] = []
      let count = 0
      for (const row of await kind.lock(transaction)) {
        const plaintext = openSealed(kind, current, row.sealed, row.id)
        // One sealed under a secret before the current one: the service cannot read it either.
        if (plaintext === undefined) {
          await kind.drop?.(transaction, row.id)
          unreadable.push(row.owner)
          continue
        }
        await kind.store(transaction, row.id, kind.seal(next, plaintext, row.id))
        count += 1
      }
      sealed.push(`${count} ${name}`)
      if (unreadable.length > 0) unreadableLines.push(kind.unreadableLine(unreadable))
    }
    await forgetIdempotencyKeys(transaction)
    await writeKeyCheck(transaction, keyCheckOf(next))
    return { sealed, unreadableLines }
  })
}

async function run(command: string | undefined): Promise<string> {
  if (command !== 'check' && command !== 'change' && command !== 'adopt') throw new UsageError(USAGE)
  const config = loadConfig()
  // Never a new one: `adopt` from a shell without TOLLGATE_SECRET would make a random secret the database's.
  const currentSecret = await findSecret(config)
  if (currentSecret === undefined) throw new UsageError(`TOLLGATE_SECRET is unset and ${storedSecretFile(config.dataDirectory)} does not exist`)
  const current = createKeyRing(currentSecret)
  if (command === 'check') return check(current)
  if (command === 'adopt') return withDatabase((database) => adopt(current, database))

  const nextSecret = await readSecretInput('new secret', (next) => findSecretProblem(next, currentSecret))
  // Kept in DATA_DIR when TOLLGATE_SECRET is unset: the new file is written aside first and takes
  // the old one's place once the database has committed.
  const file = config.secret === undefined ? storedSecretFile(config.dataDirectory) : undefined
  const draft = file === undefined ? undefined : `${file}.new`
  if (draft !== undefined) await writeFile(draft, `${nextSecret}\n`, { mode: 0o600 })
  const { sealed, unreadableLines } = await withDatabase((database) => change(current, createKeyRing(nextSecret), database)).catch(async (error: unknown) => {
    // Nothing changed: no copy of the new secret is left behind either.
    if (draft !== undefined) await rm(draft, { force: true })
    throw error
  })
  if (draft !== undefined && file !== undefined) await rename(draft, file)
  const lines = [
    `the database now goes with the new secret; ${sealed.slice(0, -1).join(', ')} and ${sealed.at(-1)} sealed under it`,
    ...unreadableLines,
    file === undefined
      ? 'start every instance with the new TOLLGATE_SECRET'
      : `${file} holds the new secret`,
    'challenges, tokens, remembered devices and unfinished two-factor setups issued before the change are refused from now on',
    'a creation retried with an Idempotency-Key sent before the change is made anew',
  ]
  return lines.join('\n')
}

await runOperatorScript('secret', async () => {
  const command = process.argv[2]
  return command === '--help' || command === '-h' ? USAGE : run(command)
})

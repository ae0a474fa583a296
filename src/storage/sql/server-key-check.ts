import { dirname } from 'node:path'
import type { Config } from '../../config.js'
import { openTotpSecret } from '../../domain/accounts/two-factor.js'
import { decryptSecret } from '../../domain/secret-box.js'
import { isSameInConstantTime } from '../../domain/mac.js'
import { keyCheckOf, type KeyRing } from '../../secret.js'
import { StartupError } from '../../startup-error.js'
import type { SqlExecutor } from '../ports.js'

/**
 * What a start found: the database's first secret; the same as before; another one (outside
 * production, told but not recorded); or, in production, another one that a development or test
 * start had recorded, now replaced by production's (only when nothing sealed under that one would
 * become unreadable: refuseToLoseSealed).
 */
export type SecretCheckOutcome = 'recorded' | 'matches' | 'differs' | 'replaced'

export interface StoredKeyCheck {
  keyCheck: string
  /** Recorded by a production start or the operator's npm run secret, not by a development or test start. */
  inProduction: boolean
}

/** The key check the database keeps (migration 012), or undefined before any instance wrote one. */
export async function readKeyCheck(executor: SqlExecutor, options: { forUpdate?: boolean } = {}): Promise<StoredKeyCheck | undefined> {
  const [row] = await executor.query<{ key_check: string; recorded_in_production: boolean }>(
    `SELECT key_check, recorded_in_production FROM server_key_check${options.forUpdate === true ? ' FOR UPDATE' : ''}`,
  )
  return row === undefined ? undefined : { keyCheck: row.key_check, inProduction: row.recorded_in_production }
}

/** Records the key check, as production's (every start in production, and the operator's npm run secret) or not. */
export async function writeKeyCheck(executor: SqlExecutor, keyCheck: string, inProduction = true): Promise<void> {
  await executor.query(
    `INSERT INTO server_key_check (key_check, recorded_in_production) VALUES ($1, $2)
     ON CONFLICT (id) DO UPDATE SET key_check = excluded.key_check, recorded_in_production = excluded.recorded_in_production, recorded_at = now()`,
    [keyCheck, inProduction],
  )
}

/** Whether the stored key check is `keyRing`'s (compared in constant time); false when none is stored. */
export function sameKeyCheck(stored: StoredKeyCheck | undefined, keyRing: KeyRing): boolean {
  return stored !== undefined && isSameInConstantTime(Buffer.from(keyCheckOf(keyRing)), Buffer.from(stored.keyCheck))
}

/**
 * Tells, at start, whether this instance's secret is the one the database goes with. Instances
 * with different secrets would each start and report ready, yet refuse one another's challenges
 * and tokens and fail to decrypt the webhook secrets sealed by the others: in production that stops
 * the start. In development and tests (a new DATA_DIR on a database kept from before) the caller
 * warns; the database keeps its secret, so that a development start pointed at a production
 * database by mistake does not lock production's own instances out (`npm run secret -- adopt`
 * makes another secret the database's on purpose).
 *
 * A secret with white space at either end (`whiteSpaceAtEnds`: a secret file's newline kept by
 * Kubernetes --from-file or systemd credentials) is never recorded, in any environment: the start
 * stops instead, saying how to make it without. One the database already goes with (releases before
 * took it) matches, and the caller warns; one that does not is told with the white space as the
 * likely cause.
 */
export async function checkServerSecret(
  executor: SqlExecutor,
  keyRing: KeyRing,
  environment: Config['environment'],
  options: { whiteSpaceAtEnds?: boolean } = {},
): Promise<SecretCheckOutcome> {
  const inProduction = environment === 'production'
  const whiteSpaceAtEnds = options.whiteSpaceAtEnds === true
  if (!whiteSpaceAtEnds) {
    const recorded = await executor.query(
      'INSERT INTO server_key_check (key_check, recorded_in_production) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING key_check',
      [keyCheckOf(keyRing), inProduction],
    )
    if (recorded.length > 0) return 'recorded'
  }
  const stored = await readKeyCheck(executor)
  if (sameKeyCheck(stored, keyRing)) {
    if (inProduction && stored?.inProduction === false) await writeKeyCheck(executor, keyCheckOf(keyRing))
    return 'matches'
  }
  if (whiteSpaceAtEnds && (stored === undefined || (inProduction && !stored.inProduction))) {
    throw new StartupError(
      `TOLLGATE_SECRET begins or ends with white space, such as the newline that ends a file made by \`openssl rand -base64 48 > secret\` ` +
        '(Kubernetes --from-file and systemd credentials keep it), and this database has no secret of ' +
        `${stored === undefined ? 'its own' : 'production\'s'} yet: it is not recorded with it. Make the file without it ` +
        "(`openssl rand -base64 48 | tr -d '\\n' > secret`) or strip it (`printf %s \"$(cat secret)\" > secret.new`, then use secret.new)",
    )
  }
  if (inProduction && stored?.inProduction === false) {
    await refuseToLoseSealed(executor, keyRing)
    await writeKeyCheck(executor, keyCheckOf(keyRing))
    return 'replaced'
  }
  if (inProduction) {
    throw new StartupError(
      'TOLLGATE_SECRET is not the secret this database was set up with: this instance would refuse the challenges and ' +
        "tokens of the others and could not decrypt the sites' webhook secrets. Give every instance the same TOLLGATE_SECRET; " +
        'to change it for good, stop them all and run npm run secret -- change, or, if the old one is lost, npm run secret -- adopt ' +
        `(README, "Changing TOLLGATE_SECRET")${whiteSpaceAtEnds ? `. ${WHITE_SPACE_CAUSE}` : ''}`,
    )
  }
  return 'differs'
}

/** What a mismatch adds when the secret has white space at either end. */
export const WHITE_SPACE_CAUSE =
  'TOLLGATE_SECRET begins or ends with white space (a secret file\'s newline, kept by Kubernetes --from-file and systemd credentials), ' +
  'the likely cause: try it stripped (`printf %s "$(cat secret)" > secret.new`, then use secret.new)'

/** A site's replaced webhook secret while it still signs (a sweep clears it once expired). */
const LIVE_PREVIOUS_WEBHOOK_SECRET = 'CASE WHEN previous_webhook_secret_expires_at > now() THEN previous_webhook_secret_ciphertext END'

/** Whether `open` cannot open a sealed value (it was sealed under another secret). */
function cannotOpen(open: () => unknown): boolean {
  try {
    open()
    return false
  } catch {
    return true
  }
}

/**
 * Stops a production start that would replace a development secret while the database holds
 * webhook or authenticator secrets sealed under that one, which this secret cannot decrypt: a
 * database copied from a development DATA_DIR (npm run data -- copy) started with a new
 * TOLLGATE_SECRET would serve on with every webhook failing and every two-factor log-in refused.
 * `npm run secret -- adopt` with this secret is the operator's explicit choice to go on without them.
 */
async function refuseToLoseSealed(executor: SqlExecutor, keyRing: KeyRing): Promise<void> {
  // A replaced webhook secret still signs beside the new one until it expires (rotation's grace):
  // losing it breaks the receivers that have not moved to the new one yet.
  const sites = await executor.query<{ id: string; sealed: string | null; previous: string | null }>(
    `SELECT id, webhook_secret_ciphertext AS sealed, ${LIVE_PREVIOUS_WEBHOOK_SECRET} AS previous FROM sites
      WHERE webhook_secret_ciphertext IS NOT NULL OR ${LIVE_PREVIOUS_WEBHOOK_SECRET} IS NOT NULL`,
  )
  const accounts = await executor.query<{ id: string; sealed: string }>('SELECT id, totp_secret_sealed AS sealed FROM accounts WHERE totp_secret_sealed IS NOT NULL')
  const webhookKey = keyRing.keyFor('webhook-encryption')
  const twoFactorKey = keyRing.keyFor('two-factor')
  const webhookSecrets = sites.filter((site) =>
    [site.sealed, site.previous].some((sealed) => sealed !== null && cannotOpen(() => decryptSecret(webhookKey, sealed, site.id))),
  ).length
  const authenticatorSecrets = accounts.filter((account) => cannotOpen(() => openTotpSecret(twoFactorKey, account.id, account.sealed))).length
  if (webhookSecrets + authenticatorSecrets === 0) return
  throw new StartupError(
    `TOLLGATE_SECRET is not the secret a development or test start recorded for this database, and ${webhookSecrets} site(s)' webhook secret(s) ` +
      `and ${authenticatorSecrets} account(s)' authenticator secret(s) (two-factor) are sealed under that one: this secret cannot decrypt them. ` +
      'Start with the secret they were sealed under (for a copy of a development DATA_DIR: TOLLGATE_SECRET="$(cat DATA_DIR/secret)"), ' +
      'then, to move to a new one, stop and run npm run secret -- change with it; or, if it is lost, run npm run secret -- adopt with this ' +
      'TOLLGATE_SECRET to go on without them (it names the sites and accounts; README, "Changing TOLLGATE_SECRET")',
  )
}

/**
 * Stops a development or test start that has no secret (TOLLGATE_SECRET unset, no `secretFile`)
 * before one is generated, when the database already holds webhook or authenticator secrets
 * sealed under the secret it was used with: a restore that brought the database back without
 * DATA_DIR/secret (or a new DATA_DIR pointed at a kept database) would otherwise serve on under a
 * new random secret, with every webhook failing to decrypt and every two-factor log-in refused,
 * and that new secret written where the lost one belongs. Only counts: no key can open them here.
 */
export async function refuseToGenerateSecret(executor: SqlExecutor, secretFile: string): Promise<void> {
  const [sealed] = await executor.query<{ webhook_secrets: number; authenticator_secrets: number }>(
    `SELECT (SELECT count(*)::int FROM sites WHERE webhook_secret_ciphertext IS NOT NULL OR ${LIVE_PREVIOUS_WEBHOOK_SECRET} IS NOT NULL) AS webhook_secrets,
            (SELECT count(*)::int FROM accounts WHERE totp_secret_sealed IS NOT NULL) AS authenticator_secrets`,
  )
  const webhookSecrets = sealed?.webhook_secrets ?? 0
  const authenticatorSecrets = sealed?.authenticator_secrets ?? 0
  if (webhookSecrets + authenticatorSecrets === 0) return
  throw new StartupError(
    `TOLLGATE_SECRET is unset and ${secretFile} does not exist, but this database holds ${webhookSecrets} site(s)' webhook secret(s) ` +
      `and ${authenticatorSecrets} account(s)' authenticator secret(s) (two-factor) sealed under the secret it was used with: ` +
      'a new secret could not decrypt them, so none is generated. Restore the secret file from the same backup as the database ' +
      `(${secretFile}), or set TOLLGATE_SECRET to that secret; if it is lost, write a new one to the file ` +
      `(\`(umask 077; mkdir -p ${dirname(secretFile)} && openssl rand -base64 48 | tr -d '\\n' > ${secretFile})\`) and run npm run secret -- adopt, which names the sites and ` +
      'accounts whose secrets are lost (README, "Restoring")',
  )
}

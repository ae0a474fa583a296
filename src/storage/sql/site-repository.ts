import { randomUUID } from 'node:crypto'
import { withDefaultSettings, type Site, type SiteSettings } from '../../domain/sites/site.js'
import { isStorableText } from '../../domain/storable-text.js'
import { generateSecretKey, generateSiteKey, hashSecretKey } from '../../domain/sites/site-keys.js'
import type { SiteRole } from '../../domain/sites/site-roles.js'
import type { SqlExecutor } from '../ports.js'

interface SiteRow {
  id: string
  account_id: string | null
  name: string
  site_key: string
  secret_key_hash: string
  previous_secret_key_hash: string | null
  previous_secret_expires_at: Date | null
  earlier_secret_key_hash: string | null
  earlier_secret_expires_at: Date | null
  domains: string[]
  settings: Partial<SiteSettings>
  webhook_secret_ciphertext: string | null
  previous_webhook_secret_ciphertext: string | null
  previous_webhook_secret_expires_at: Date | null
  secret_rotated_at: Date | null
  created_at: Date
  updated_at: Date
  revision: string
}

const siteColumns = `id, account_id, name, site_key, secret_key_hash, previous_secret_key_hash, previous_secret_expires_at,
  earlier_secret_key_hash, earlier_secret_expires_at, domains, settings, webhook_secret_ciphertext,
  previous_webhook_secret_ciphertext, previous_webhook_secret_expires_at, secret_rotated_at, created_at, updated_at, revision::text AS revision`

function toSite(row: SiteRow): Site {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    siteKey: row.site_key,
    secretKeyHash: row.secret_key_hash,
    previousSecrets: [
      [row.previous_secret_key_hash, row.previous_secret_expires_at],
      [row.earlier_secret_key_hash, row.earlier_secret_expires_at],
    ].flatMap(([keyHash, expiresAt]) => (keyHash === null || expiresAt === null ? [] : [{ keyHash: keyHash as string, expiresAt: expiresAt as Date }])),
    domains: row.domains,
    settings: withDefaultSettings(row.settings),
    webhookSecretCiphertext: row.webhook_secret_ciphertext,
    previousWebhookSecret:
      row.previous_webhook_secret_ciphertext === null || row.previous_webhook_secret_expires_at === null
        ? null
        : { ciphertext: row.previous_webhook_secret_ciphertext, expiresAt: row.previous_webhook_secret_expires_at },
    secretRotatedAt: row.secret_rotated_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    revision: row.revision,
  }
}

export interface NewSite {
  id?: string
  accountId: string | null
  name: string
  domains?: string[]
  settings?: Partial<SiteSettings>
  webhookSecretCiphertext?: string | null
  /** Fixed keys (the development demo site); generated when absent. */
  siteKey?: string
  secretKey?: string
}

export interface SiteChanges {
  name?: string
  domains?: string[]
  /** Merged key by key; a null value removes the key, so the default applies again. */
  settings?: { [Name in keyof SiteSettings]?: SiteSettings[Name] | null }
  /** undefined keeps the stored secret; null clears it. Either change drops the replaced one, unless: */
  webhookSecretCiphertext?: string | null
  /**
   * With a new webhookSecretCiphertext, a date keeps the secret it replaces signing beside it
   * until then (the one replaced before that stops). null, with or without a new secret, stops the
   * replaced secret now.
   */
  previousWebhookSecretExpiresAt?: Date | null
}

/** Sites in the system of record. Plain SQL that runs alike on PostgreSQL and PGlite. */
export function createSiteRepository(database: SqlExecutor) {
  /**
   * Inserts the site. With an account and a limit, the account's row is read FOR KEY SHARE with
   * the count: an account being deleted (its row held FOR UPDATE) is waited for, and once it is
   * gone nothing is inserted (rather than the foreign key failing), so the caller can tell.
   */
  async function insert(site: NewSite, within?: { accountId: string; limit: number }): Promise<{ site: Site; secretKey: string } | undefined> {
    const secretKey = site.secretKey ?? generateSecretKey()
    const values = [
      site.id ?? randomUUID(),
      within?.accountId ?? site.accountId,
      site.name,
      site.siteKey ?? generateSiteKey(),
      hashSecretKey(secretKey),
      site.domains ?? [],
      JSON.stringify(site.settings ?? {}),
      site.webhookSecretCiphertext ?? null,
    ]
    const columns = 'id, account_id, name, site_key, secret_key_hash, domains, settings, webhook_secret_ciphertext'
    const rows = within === undefined
      ? await database.query<SiteRow>(
        `INSERT INTO sites (${columns}) VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6::text[], $7::jsonb, $8) RETURNING ${siteColumns}`,
        values,
      )
      : await database.query<SiteRow>(
        `INSERT INTO sites (${columns})
         SELECT $1::uuid, accounts.id, $3, $4, $5, $6::text[], $7::jsonb, $8 FROM accounts
          WHERE accounts.id = $2::uuid AND (SELECT count(*) FROM sites WHERE account_id = $2::uuid) < $9::integer
            FOR KEY SHARE OF accounts
         RETURNING ${siteColumns}`,
        [...values, within.limit],
      )
    return rows[0] === undefined ? undefined : { site: toSite(rows[0]), secretKey }
  }

  return {
    /** Creates a site and returns it with its secret key, which is never stored in clear. */
    async create(site: NewSite): Promise<{ site: Site; secretKey: string }> {
      const created = await insert(site)
      if (created === undefined) throw new Error('the site was not inserted')
      return created
    },

    /**
     * Creates a site unless its account holds `limit` sites already or is gone (undefined then).
     * One statement: the count and the insert see the same snapshot, so creations racing on one
     * account may pass the limit by the few that raced; it bounds a list, it guards no secret.
     */
    createWithinLimit(site: NewSite & { accountId: string }, limit: number): Promise<{ site: Site; secretKey: string } | undefined> {
      return insert(site, { accountId: site.accountId, limit })
    },

    async findById(id: string): Promise<Site | undefined> {
      const rows = await database.query<SiteRow>(`SELECT ${siteColumns} FROM sites WHERE id = $1`, [id])
      return rows[0] === undefined ? undefined : toSite(rows[0])
    },

    /**
     * The site, its row locked until the transaction ends (run within one) as an UPDATE locks it:
     * FOR NO KEY UPDATE, which rows that refer to the site (Siteverify's counts, webhook deliveries)
     * can still be inserted beside, where FOR UPDATE would hold them.
     */
    async findByIdForUpdate(id: string): Promise<Site | undefined> {
      const rows = await database.query<SiteRow>(`SELECT ${siteColumns} FROM sites WHERE id = $1 FOR NO KEY UPDATE`, [id])
      return rows[0] === undefined ? undefined : toSite(rows[0])
    },

    async findBySiteKey(siteKey: string): Promise<Site | undefined> {
      // A key from a request (the gate's query string) that no row can hold names no site.
      if (!isStorableText(siteKey)) return undefined
      const rows = await database.query<SiteRow>(`SELECT ${siteColumns} FROM sites WHERE site_key = $1`, [siteKey])
      return rows[0] === undefined ? undefined : toSite(rows[0])
    },

    /**
     * The site whose current secret key, or one a rotation replaced, has this hash (hashSecretKey):
     * Siteverify's feedback named by verification_id alone. The caller still checks the key with
     * acceptsSecretKey (a replaced key's grace period), in constant time. The call is
     * unauthenticated until then: each column has its index (migration 028), which the planner
     * combines (a BitmapOr), so no call reads every site.
     */
    async findBySecretKeyHash(secretKeyHash: string): Promise<Site | undefined> {
      const rows = await database.query<SiteRow>(
        `SELECT ${siteColumns} FROM sites WHERE $1 IN (secret_key_hash, previous_secret_key_hash, earlier_secret_key_hash) LIMIT 1`,
        [secretKeyHash],
      )
      return rows[0] === undefined ? undefined : toSite(rows[0])
    },

    async listByAccount(accountId: string): Promise<Site[]> {
      const rows = await database.query<SiteRow>(
        `SELECT ${siteColumns} FROM sites WHERE account_id = $1 ORDER BY created_at, id`,
        [accountId],
      )
      return rows.map(toSite)
    },

    /**
     * The sites the account owns and those shared with it, each with its role there, oldest
     * first: two index lookups (sites_account, site_members_account), whatever the tables hold.
     */
    async listVisibleTo(accountId: string): Promise<{ site: Site; role: SiteRole }[]> {
      const rows = await database.query<SiteRow & { role: SiteRole }>(
        `SELECT ${siteColumns}, 'owner' AS role FROM sites WHERE account_id = $1
         UNION ALL
         SELECT ${siteColumns}, shared.role FROM sites JOIN (SELECT site_id, role FROM site_members WHERE account_id = $1) shared ON shared.site_id = sites.id
         ORDER BY created_at, id`,
        [accountId],
      )
      return rows.map((row) => ({ site: toSite(row), role: row.role }))
    },

    /**
     * Applies changes and returns the updated site. Settings merge key by key in one statement
     * (jsonb ||), so concurrent updates of different settings never undo each other; a key
     * set to null is removed and falls back to its default. With expectedRevisions, only a site
     * still at one of them is changed (undefined otherwise, as for a site that does not exist):
     * an update that waited for another's row lock sees the revision that one left.
     * Changes that leave the row as it is write nothing: the site is answered as it is, its
     * revision and updatedAt unchanged (expectedRevisions still checked), so that a client sending
     * its whole configuration again makes no earlier ETag stale. Run within a transaction that
     * holds the row (findByIdForUpdate), the site answered then is the one the changes were
     * compared with.
     */
    async update(id: string, changes: SiteChanges, expectedRevisions?: readonly string[]): Promise<Site | undefined> {
      // The row's values after the changes, each compared with the stored one before anything is written.
      const next = {
        name: 'COALESCE($2, name)',
        domains: 'COALESCE($3::text[], domains)',
        settings: 'jsonb_strip_nulls(settings || $4::jsonb)',
        webhook_secret_ciphertext: 'CASE WHEN $5 THEN $6 ELSE webhook_secret_ciphertext END',
        previous_webhook_secret_ciphertext: `CASE
             WHEN $8 THEN CASE WHEN $9::timestamptz IS NULL OR NOT $5 THEN NULL ELSE webhook_secret_ciphertext END
             WHEN $5 THEN NULL ELSE previous_webhook_secret_ciphertext END`,
        previous_webhook_secret_expires_at: `CASE
             WHEN $8 THEN CASE WHEN $9::timestamptz IS NULL OR NOT $5 OR webhook_secret_ciphertext IS NULL THEN NULL ELSE $9::timestamptz END
             WHEN $5 THEN NULL ELSE previous_webhook_secret_expires_at END`,
      }
      const atRevision = (parameter: string) => `(${parameter}::text[] IS NULL OR revision::text = ANY(${parameter}::text[]))`
      const parameters = [
        id,
        changes.name ?? null,
        changes.domains ?? null,
        JSON.stringify(changes.settings ?? {}),
        changes.webhookSecretCiphertext !== undefined,
        changes.webhookSecretCiphertext ?? null,
        expectedRevisions === undefined ? null : [...expectedRevisions],
        changes.previousWebhookSecretExpiresAt !== undefined,
        changes.previousWebhookSecretExpiresAt ?? null,
      ]
      const rows = await database.query<SiteRow>(
        `UPDATE sites SET
           ${Object.entries(next).map(([column, value]) => `${column} = ${value}`).join(',\n           ')},
           updated_at = now(), revision = revision + 1
         WHERE id = $1 AND ${atRevision('$7')}
           AND (${Object.values(next).join(', ')}) IS DISTINCT FROM (${Object.keys(next).join(', ')})
         RETURNING ${siteColumns}`,
        parameters,
      )
      if (rows[0] !== undefined) return toSite(rows[0])
      // Nothing updated: no such site, not at an expected revision, or nothing to change.
      const unchanged = await database.query<SiteRow>(
        `SELECT ${siteColumns} FROM sites WHERE id = $1 AND ${atRevision('$2')}`,
        [id, parameters[6]],
      )
      return unchanged[0] === undefined ? undefined : toSite(unchanged[0])
    },

    /**
     * Forgets the replaced webhook secrets whose overlap has ended (the retention sweep): no
     * delivery signs with them any more, and a sealed secret is kept no longer than it is of use.
     * The site's revision stays: what the API shows of it does not change. Answers how many went.
     */
    async clearExpiredPreviousWebhookSecrets(): Promise<number> {
      const rows = await database.query(
        `UPDATE sites SET previous_webhook_secret_ciphertext = NULL, previous_webhook_secret_expires_at = NULL
          WHERE previous_webhook_secret_expires_at <= now()
          RETURNING 1`,
      )
      return rows.length
    },

    /**
     * Replaces the secret key. With previousValidUntil, the key replaced keeps working until then,
     * and the one the rotation before replaced keeps the rest of its grace period (a key from
     * before that stops); without, every key but the new one stops at once.
     */
    async rotateSecret(id: string, previousValidUntil: Date | null = null): Promise<string | undefined> {
      const secretKey = generateSecretKey()
      // SET reads the row as it was, so the previous hash is the one being replaced.
      const rows = await database.query<{ id: string }>(
        `UPDATE sites SET
           earlier_secret_key_hash = CASE WHEN $3::timestamptz IS NULL OR previous_secret_expires_at <= now() THEN NULL ELSE previous_secret_key_hash END,
           earlier_secret_expires_at = CASE WHEN $3::timestamptz IS NULL OR previous_secret_expires_at <= now() THEN NULL ELSE previous_secret_expires_at END,
           previous_secret_key_hash = CASE WHEN $3::timestamptz IS NULL THEN NULL ELSE secret_key_hash END,
           previous_secret_expires_at = $3::timestamptz,
           secret_key_hash = $2,
           secret_rotated_at = now(), updated_at = now(), revision = revision + 1
         WHERE id = $1 RETURNING id`,
        [id, hashSecretKey(secretKey), previousValidUntil],
      )
      return rows.length === 0 ? undefined : secretKey
    },

    /** Stops every replaced secret key now; false when there is no such site. */
    async endPreviousSecret(id: string): Promise<boolean> {
      const rows = await database.query<{ id: string }>(
        `UPDATE sites SET previous_secret_key_hash = NULL, previous_secret_expires_at = NULL,
           earlier_secret_key_hash = NULL, earlier_secret_expires_at = NULL, updated_at = now(),
           revision = revision + 1
         WHERE id = $1 RETURNING id`,
        [id],
      )
      return rows.length > 0
    },

    /**
     * Makes the account the site's owner unless it owns `limit` sites already (undefined then, as
     * for a site that does not exist). The count and the change see one snapshot: a site created
     * for the account at that very moment may pass the limit by the few that raced, as creations
     * racing each other may (createWithinLimit); it bounds a list, it guards no secret.
     */
    async changeOwnerWithinLimit(id: string, accountId: string, limit: number): Promise<Site | undefined> {
      const rows = await database.query<SiteRow>(
        `UPDATE sites SET account_id = $2::uuid, updated_at = now(), revision = revision + 1
          WHERE id = $1 AND (SELECT count(*) FROM sites WHERE account_id = $2::uuid) < $3::integer
         RETURNING ${siteColumns}`,
        [id, accountId, limit],
      )
      return rows[0] === undefined ? undefined : toSite(rows[0])
    },

    async delete(id: string): Promise<boolean> {
      const rows = await database.query<{ id: string }>('DELETE FROM sites WHERE id = $1 RETURNING id', [id])
      return rows.length > 0
    },
  }
}

export type SiteRepository = ReturnType<typeof createSiteRepository>

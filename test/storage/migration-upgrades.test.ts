import { createHash, randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createKeyRing, keyCheckOf } from '../../src/secret.js'
import { migrate, readMigrations, splitStatements, type Migration } from '../../src/storage/migrate.js'
import { MAX_REPEATED_ADDRESSES, REPEATED_PERIOD_MS, repeatedHourOf } from '../../src/domain/audit/audit-actions.js'
import { OPERATOR_ACTOR } from '../../src/domain/audit/audit-event.js'
import { createAccountRepository } from '../../src/storage/sql/account-repository.js'
import { createApiKeyRepository } from '../../src/storage/sql/api-key-repository.js'
import { createAuditLogRepository } from '../../src/storage/sql/audit-log-repository.js'
import { createSiteRepository } from '../../src/storage/sql/site-repository.js'
import { createWebhookDeliveryRepository } from '../../src/storage/sql/webhook-delivery-repository.js'
import { DECIDED_BY_SQL } from '../../src/storage/sql/decided-by.js'
import { checkServerSecret, readKeyCheck } from '../../src/storage/sql/server-key-check.js'
import { OTHER_ROLLUP_VALUE, ROLLUP_VALUES_PER_HOUR } from '../../src/storage/sql/rollup-values.js'
import { createVerificationQueryRepository } from '../../src/storage/sql/verification-query-repository.js'
import { verificationLoadOf, type VerificationLogEntry } from '../../src/storage/sql/verification-log-writer.js'
import { randomClientAddress } from '../helpers/dashboard-client.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { databaseKinds, withTestDatabase } from '../helpers/storage.js'
import { insertVerifications } from '../helpers/verification-rows.js'

/**
 * The statements (comments aside) of every migration as it shipped. The runner skips a version a
 * database has applied, so an edit of a shipped migration never reaches the databases that ran it
 * (012 gained a column that way and broke their next start): change the schema in a new
 * migration, and add its line here.
 */
const shipped: [string, string][] = [
  ['001_foundation', '53d0a48d63d4b343'],
  ['002_accounts_and_sites', '90b5de66b347fcb8'],
  ['003_verification_log', 'd1b2ca03b99191f0'],
  ['004_verification_step_ups', 'c822bdfda61a0211'],
  ['005_sessions_and_api_keys', '3d458d35ddda9fac'],
  ['006_webhook_deliveries', '5a1ba73bebc926dc'],
  ['007_verification_rollups', '00b8a369f7d1fafa'],
  ['008_webhook_dropped_outcome', 'f1e16e74367631e8'],
  ['009_accounts_email_nfc', '86d0a4dc669e4aa0'],
  ['010_sites_previous_secret', '9aa20bcf5a4a4dc3'],
  ['011_session_details', '898794d5994d5123'],
  ['012_server_key_check', '53725fd9d8b62d02'],
  ['013_sites_earlier_secret', 'dc7d8706f4bd5fd9'],
  ['014_sites_revision', '84cee8f4202bd457'],
  ['015_server_key_check_production', '7d1fa86e229d76ed'],
  ['016_accounts_created', 'bb244ea4b4cc2995'],
  ['017_verification_rollups_scores_hostnames', '7a4753578aa8500b'],
  ['018_accounts_created_table', 'cb5eee297a0572f3'],
  ['019_verification_rollups_scored_hostnames', '453b9a705de76165'],
  ['020_verification_rollups_counted_by_writer', 'ec183d700d02370f'],
  ['021_verification_rollups_page_actions', '09885505e4efb90a'],
  ['022_siteverify_counts', '429629d0e9e91bfd'],
  ['023_verifications_device', '237b0d467433ad83'],
  ['024_audit_events', 'b40136f5e66a7deb'],
  ['025_account_two_factor', '4a42571cbde6c4fd'],
  ['026_api_key_access_and_expiry', 'c51911909327d416'],
  ['027_site_members', '0ee8b3152c0a9b84'],
  ['028_verification_labels', '868fc78ea876e72d'],
  ['029_passkeys', '2bc315025d48da1c'],
  ['030_verifications_decided_by', '75396a24971930be'],
  ['031_audit_events_repeated_hour', '56ae247a76251600'],
  ['032_webhook_deliveries_verification', '1fb1701aef1ddcfd'],
  ['033_idempotency_keys', '1fb9b7d75f4e5d9c'],
  ['034_sites_previous_webhook_secret', '93868283344a187a'],
  ['035_webhook_deliveries_redelivery', '621a1e4797b37532'],
  ['036_accounts_disabled', '706b8138d610cbcf'],
  ['037_audit_events_actor_account', '3826f01bdf71e405'],
  ['038_api_key_sites', '9a6c4e607934d957'],
  ['039_sites_secret_rotated_at', '4599b9adac3b7d15'],
  ['040_accounts_credential_epoch', '978fd2754f824161'],
  ['041_verification_log_decided_index_and_counted_deletes', 'ac25e7e3f06dc4d1'],
  ['042_verification_rollups_bounded_values', 'a0b8b91f69f505bf'],
  ['043_api_key_allowed_addresses', '0c80ed97a3dfbcc6'],
  ['044_display_names_nfc', 'e7ce7f73af749339'],
]

function fingerprintOf(migration: Migration): string {
  return createHash('sha256').update(splitStatements(migration.sql.replaceAll('\r\n', '\n')).join(';\n')).digest('hex').slice(0, 16)
}

describe('the migrations', () => {
  it('are the ones that shipped, statement for statement: a change to the schema is a new migration', async () => {
    const migrations = await readMigrations()
    expect(migrations.map((migration) => [`${String(migration.version).padStart(3, '0')}_${migration.name}`, fingerprintOf(migration)])).toEqual(shipped)
  })
})

/**
 * topAnomalies as the version before migration 028 runs it (f2f5125, src/storage/sql/verification-query-repository.ts),
 * its rankedQuery expanded: it names the unnested anomaly `label`, which a column of that name in
 * verifications would make ambiguous while older instances still serve stats.
 */
const olderTopAnomalies = `SELECT label, sum(count)::int8 AS count FROM (
       SELECT value AS label, count FROM verification_rollups WHERE kind = 'anomaly' AND site_id = $1 AND hour >= $3 AND hour < $4
       UNION ALL
       SELECT label, 1 FROM verifications CROSS JOIN LATERAL unnest(anomalies) AS label WHERE site_id = $1 AND ((created_at >= $2 AND created_at < $3) OR (created_at >= $4 AND created_at < $5))
     ) AS counted
     GROUP BY label ORDER BY count DESC, label LIMIT $6`

/**
 * recordRepeated as the version before migration 031 runs it (21ecf80, src/storage/sql/audit-log-repository.ts):
 * the hour's latest event of the action, found by its time, counts the attempt, else a new one.
 */
const olderRecordRepeated = `WITH latest AS (
       SELECT id FROM audit_events
        WHERE account_id = $2 AND action = $3 AND created_at >= $13 AND (details->>'firstAt')::timestamptz >= $13
        ORDER BY created_at DESC LIMIT 1
        FOR UPDATE
     ), counted AS (
       UPDATE audit_events SET
         created_at = clock_timestamp(), actor_type = $4, actor_id = $5, actor_name = $6, actor_key_prefix = $7, client_ip = $8, user_agent = $9,
         details = details || jsonb_build_object(
           'count', (details->>'count')::int + 1,
           'addresses', CASE WHEN details->'addresses' ? $14 OR jsonb_array_length(details->'addresses') >= $15 THEN details->'addresses'
                             ELSE details->'addresses' || to_jsonb($14::text) END)
        WHERE id IN (SELECT id FROM latest)
       RETURNING id
     )
     INSERT INTO audit_events (id, created_at, account_id, action, actor_type, actor_id, actor_name, actor_key_prefix, client_ip, user_agent, site_id, site_name, details)
     SELECT $1, clock_timestamp(), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
            $12::jsonb || jsonb_build_object('count', 1, 'firstAt', clock_timestamp(), 'addresses', jsonb_build_array($14::text))
      WHERE NOT EXISTS (SELECT 1 FROM counted)
        AND EXISTS (SELECT 1 FROM accounts WHERE id = $2 FOR KEY SHARE)`

/** Migration 012 as it first shipped (e06bf26), without recorded_in_production. */
const firstServerKeyCheck: Migration = {
  version: 12,
  name: 'server_key_check',
  sql: `CREATE TABLE server_key_check (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  key_check text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);`,
}

/** Migration 016 as it was first committed (52addf7): a sequence where it now has a one-row table. */
const firstAccountsCreated: Migration = {
  version: 16,
  name: 'accounts_created',
  sql: `CREATE SEQUENCE accounts_created;
SELECT setval('accounts_created', count(*)) FROM accounts HAVING count(*) > 0;
CREATE FUNCTION accounts_count_creation() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM nextval('accounts_created');
  RETURN NULL;
END
$fn$;
CREATE TRIGGER accounts_count_creation AFTER INSERT ON accounts FOR EACH ROW EXECUTE FUNCTION accounts_count_creation();`,
}

describe.each(databaseKinds)('upgrading a database on $kind', ({ kind, available }) => {
  it.skipIf(!available)('that applied the first form of 012: the secret check the old version recorded still holds, in production too', async () => {
    await withTestDatabase(kind, async (database) => {
      const migrations = await readMigrations()
      await migrate(database, [...migrations.filter((migration) => migration.version < 12), firstServerKeyCheck])
      const keyRing = createKeyRing('x'.repeat(43))
      // What the version of then recorded at its start.
      await database.query('INSERT INTO server_key_check (key_check) VALUES ($1)', [keyCheckOf(keyRing)])

      expect(await migrate(database, migrations)).toEqual(migrations.filter((migration) => migration.version > 12).map((migration) => migration.version))
      expect(await readKeyCheck(database)).toMatchObject({ inProduction: true })
      expect(await checkServerSecret(database, keyRing, 'production')).toBe('matches')
      await expect(checkServerSecret(database, createKeyRing('y'.repeat(43)), 'production')).rejects.toThrow(/not the secret this database was set up with/)
    }, { migrated: false })
  })

  it.skipIf(!available).each([
    ['with accounts already: the count of accounts created starts at theirs, so the setup code logged before them is void', undefined],
    ['that ran the first form of 016 (a sequence): the count carries over into the table, and goes on', firstAccountsCreated],
  ])('%s', async (_name, earlier016) => {
    await withTestDatabase(kind, async (database) => {
      const migrations = await readMigrations()
      const before = migrations.filter((migration) => migration.version < 16)
      await migrate(database, earlier016 === undefined ? before : [...before, earlier016])
      const accounts = createAccountRepository(database)
      await accounts.create('one@example.com', 'hash')
      await accounts.create('two@example.com', 'hash')
      const firstToRun = earlier016 === undefined ? 16 : 17
      expect(await migrate(database, migrations)).toEqual(migrations.filter((migration) => migration.version >= firstToRun).map((migration) => migration.version))
      expect(await accounts.createdCount()).toBe(2)
      await accounts.create('three@example.com', 'hash')
      expect(await accounts.createdCount()).toBe(3)
    }, { migrated: false })
  })

  it.skipIf(!available)('that ran the first form of 017 (hostnames of rejected submissions counted): counts them no more, then or later', async () => {
    await withTestDatabase(kind, async (database) => {
      const migrations = await readMigrations()
      const current = migrations.find((migration) => migration.version === 17)!
      // The first form differed only there: its hostname counts did not ask for a risk score.
      const first: Migration = { ...current, sql: current.sql.replaceAll('hostname IS NOT NULL AND risk_score IS NOT NULL', 'hostname IS NOT NULL') }
      expect(first.sql).not.toBe(current.sql)
      await migrate(database, [...migrations.filter((migration) => migration.version < 17), first])
      const siteId = randomUUID()
      const at = new Date(Date.now() - 3_600_000)
      await insertVerifications(database, [
        { siteId, createdAt: at, action: 'allow', riskScore: 10, hostname: 'shop.example' },
        { siteId, createdAt: at, action: 'rejected', riskScore: null, hostname: 'made-up-1.example' },
      ])
      const hostnames = async () =>
        (await database.query<{ value: string; count: number }>("SELECT value, count FROM verification_rollups WHERE kind = 'hostname' ORDER BY value")).map(({ value, count }) => `${value} ${count}`)
      expect(await hostnames()).toEqual(['made-up-1.example 1', 'shop.example 1'])

      await migrate(database, migrations)
      expect(await hostnames()).toEqual(['shop.example 1'])
      await insertVerifications(database, [
        { siteId, createdAt: at, action: 'rejected', riskScore: null, hostname: 'made-up-2.example' },
        { siteId, createdAt: at, action: 'block', riskScore: 90, hostname: 'shop.example' },
      ])
      expect(await hostnames()).toEqual(['shop.example 2'])
    }, { migrated: false })
  })

  it.skipIf(!available)("with logged anomalies: after 028, an older instance's topAnomalies and 021's rollup trigger still work (rolling upgrade)", async () => {
    await withTestDatabase(kind, async (database) => {
      const migrations = await readMigrations()
      await migrate(database, migrations.filter((migration) => migration.version < 28))
      const siteId = randomUUID()
      const at = new Date('2025-03-01T10:15:00Z')
      await insertVerifications(database, [{ siteId, createdAt: at, action: 'block', riskScore: 90, anomalies: ['bot_user_agent'] }])
      await migrate(database, migrations)
      // An older instance's insert, which 021's trigger counts, and its stats over the partial hour.
      await insertVerifications(database, [{ siteId, createdAt: at, action: 'block', riskScore: 90, anomalies: ['bot_user_agent'] }])
      const rollups = async () => database.query<{ count: number }>("SELECT count FROM verification_rollups WHERE kind = 'anomaly' AND value = 'bot_user_agent'")
      expect(await rollups()).toEqual([{ count: 2 }])
      const halfPast = new Date('2025-03-01T10:30:00Z')
      const ranked = await database.query<{ label: string; count: number | string }>(olderTopAnomalies, [siteId, new Date('2025-03-01T10:00:00Z'), halfPast, halfPast, halfPast, 10])
      expect(ranked.map(({ label, count }) => [label, Number(count)])).toEqual([['bot_user_agent', 2]])
      // A delete (the retention's), through the trigger's transition tables.
      await database.query('DELETE FROM verifications WHERE site_id = $1', [siteId])
      expect(await rollups()).toEqual([])
    }, { migrated: false })
  })

  it.skipIf(!available)("after 028: finding a site by a secret's hash (feedback by verification_id) reads the three key columns' indexes", async () => {
    await withTestDatabase(kind, async (database) => {
      // The table is small here, so the planner would read it whole anyway: forbid that, and a
      // plan without the indexes still scans (disabled, not impossible) while one with them combines them.
      const plan = await database.transaction(async (transaction) => {
        await transaction.query('SET LOCAL enable_seqscan = off')
        const rows = await transaction.query<{ 'QUERY PLAN': string }>(
          'EXPLAIN SELECT id FROM sites WHERE $1 IN (secret_key_hash, previous_secret_key_hash, earlier_secret_key_hash) LIMIT 1',
          ['0'.repeat(64)],
        )
        return rows.map((row) => row['QUERY PLAN']).join('\n')
      })
      expect(plan).toContain('BitmapOr')
      for (const index of ['sites_secret_key_hash', 'sites_previous_secret_key_hash', 'sites_earlier_secret_key_hash']) expect(plan).toContain(index)
      expect(plan).not.toContain('Seq Scan')
    })
  })

  it.skipIf(!available)("after 028: the stats' labels and the log's verificationId filter read 028's partial indexes", async () => {
    await withTestDatabase(kind, async (database) => {
      const planOf = (sql: string, params: unknown[]) =>
        database.transaction(async (transaction) => {
          await transaction.query('SET LOCAL enable_seqscan = off')
          const rows = await transaction.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params)
          return rows.map((row) => row['QUERY PLAN']).join('\n')
        })
      const siteId = randomUUID()
      // A log of unlabeled rows with a few labeled ones, analyzed: the planner's choice on an empty
      // table says nothing (every index costs the same there).
      const at = new Date(Date.now() - 3_600_000)
      const ids = await insertVerifications(
        database,
        Array.from({ length: 3000 }, () => ({ siteId, createdAt: at, action: 'allow' as const, riskScore: 10, challengeId: randomUUID() })),
      )
      await database.query(`UPDATE verifications SET feedback_label = 'fraudulent' WHERE id = ANY($1::uuid[])`, [ids.slice(0, 5)])
      await database.query('ANALYZE verifications')
      // As countLabeledScores filters: the site, labeled, created within the range.
      const labeled = await planOf(
        `SELECT action, count(*) FROM verifications WHERE site_id = $1 AND feedback_label IS NOT NULL AND created_at >= $2 AND created_at < $3 AND risk_score IS NOT NULL GROUP BY action`,
        [siteId, new Date(0), new Date()],
      )
      expect(labeled).toContain('verifications_site_labeled')
      expect(labeled).toMatch(/Index Cond: .*created_at/)
      // As listPage's verificationId filter, which matches the row's own id or its challenge's: each arm its index.
      const byVerificationId = await planOf(
        `SELECT id FROM verifications WHERE site_id = $1 AND (id = $2::uuid OR (challenge_id = $2::uuid AND challenge_id IS NOT NULL AND action <> 'rejected'))
          ORDER BY created_at DESC, id DESC LIMIT 26`,
        [siteId, randomUUID()],
      )
      expect(byVerificationId).toContain('BitmapOr')
      expect(byVerificationId).toContain('verifications_pkey')
      expect(byVerificationId).toContain('verifications_site_challenge')
      expect(byVerificationId).not.toContain('Seq Scan')
    })
  })

  it.skipIf(!available)("after 032: an older instance's delivery record (its exact columns) lands without a verification, this version's with one", async () => {
    await withTestDatabase(kind, async (database) => {
      const migrations = await readMigrations()
      await migrate(database, migrations.filter((migration) => migration.version < 32))
      const { site } = await createSiteRepository(database).create({ accountId: null, name: 'Deliveries' })
      await migrate(database, migrations)
      // As the release before 032 records a delivery: its columns named, verification_id not among them.
      const older = randomUUID()
      await database.query(
        `INSERT INTO webhook_deliveries (id, site_id, event, url, is_test, outcome, status_code, latency_ms, error, created_at)
         VALUES ($1, $2, 'verification.blocked', 'https://hooks.example/x', false, 'delivered', 204, 3, NULL, now())`,
        [older, site.id],
      )
      const deliveries = createWebhookDeliveryRepository(database)
      const verificationId = randomUUID()
      const newer = randomUUID()
      await deliveries.record({
        id: newer, siteId: site.id, event: 'verification.blocked', url: 'https://hooks.example/x', isTest: false, verificationId, redeliveryOf: null,
        outcome: 'delivered', statusCode: 204, latencyMs: 3, error: null, createdAt: new Date(),
      })
      expect((await deliveries.findById(older))?.verificationId).toBeNull()
      expect((await deliveries.findById(newer))?.verificationId).toBe(verificationId)
    })
  })

  it.skipIf(!available)("after 030: an older writer's bulk load (its exact columns) lands without decidedBy, a value no list names is refused, and the filter reads the site's time indexes", async () => {
    await withTestDatabase(kind, async (database) => {
      const migrations = await readMigrations()
      await migrate(database, migrations.filter((migration) => migration.version < 30))
      const siteId = randomUUID()
      const at = new Date(Date.now() - 3_600_000)
      const before = await insertVerifications(database, [{ siteId, createdAt: at, action: 'block', riskScore: 100, anomalies: ['address_blocked'] }])
      await migrate(database, migrations.filter((migration) => migration.version < 41))
      // An instance of the release before 030 loads its batches (COPY on PGlite, INSERT ... unnest on
      // PostgreSQL) naming exactly these columns: this writer's load without decided_by.
      const entries = Array.from({ length: 3000 }, (): VerificationLogEntry => ({
        siteId, challengeId: randomUUID(), createdAt: at, action: 'allow', errorCode: null, riskScore: 10, anomalies: [], countryCode: null,
        clientIp: null, hostname: null, pageAction: null, userAgent: null, difficulty: 18, solveTimeMs: 900, stepUps: 0, device: null, decidedBy: 'allowlist',
      }))
      const load = verificationLoadOf(entries)
      const kept = load.columns.map((column, index) => ({ column, values: load.values[index]! })).filter(({ column }) => column.name !== 'decided_by')
      const olderLoad = { table: load.table, columns: kept.map(({ column }) => column), values: kept.map(({ values }) => values) }
      expect(olderLoad.columns.map((column) => column.name)).toEqual([
        'id', 'site_id', 'challenge_id', 'created_at', 'action', 'error_code', 'risk_score', 'anomalies', 'country_code', 'client_ip', 'hostname',
        'page_action', 'user_agent', 'difficulty', 'solve_time_ms', 'step_ups', 'device',
      ])
      await database.loadRows(olderLoad)
      const ids = entries.map((entry) => entry.id!)
      const decided = await database.query<{ decided_by: string | null; count: number }>(
        'SELECT decided_by, count(*)::int4 AS count FROM verifications WHERE site_id = $1 GROUP BY decided_by',
        [siteId],
      )
      expect(decided).toEqual([{ decided_by: null, count: 3001 }])
      await database.query(`UPDATE verifications SET decided_by = 'allowlist' WHERE id = ANY($1::uuid[])`, [ids.slice(0, 5)])
      await expect(database.query(`UPDATE verifications SET decided_by = 'model' WHERE id = $1`, [before[0]])).rejects.toThrow(/verifications_decided_by/)
      await database.query('ANALYZE verifications')
      const planOfFilter = () => database.transaction(async (transaction) => {
        await transaction.query('SET LOCAL enable_seqscan = off')
        const rows = await transaction.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT id FROM verifications WHERE site_id = $1 AND ${DECIDED_BY_SQL} = $2 AND created_at >= $3 AND created_at < $4
            ORDER BY created_at DESC, id DESC LIMIT 26`,
          [siteId, 'blocklist', new Date(at.getTime() - 3_600_000), new Date()],
        )
        return rows.map((row) => row['QUERY PLAN']).join('\n')
      })
      // 030 builds no index: the filter, as listPage writes it, reads the site's rows of the window
      // through its time indexes (migration 003) and checks each. With every row of the table the
      // site's, a bitmap scan of site_action_time (site_id, then the window) may win over a walk of
      // site_time: either way one of the site's time indexes, no table scan.
      expect(await planOfFilter()).toMatch(/Index Scan (Backward )?(using|on) verifications_site_(action_)?time/)
      const decidedIndexes = () => database.query<{ indexname: string }>(
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'verifications' AND indexdef LIKE '%decided_by%'",
      )
      expect(await decidedIndexes()).toEqual([])
      // 041 indexes the filter's expression: the filter reads only the rows a list decided (the
      // dashboard offers it; on a site of 838,817 rows it read them all, 1.3-1.9 s).
      expect(await migrate(database, migrations.filter((migration) => migration.version <= 41))).toEqual([41])
      expect(await decidedIndexes()).toEqual([{ indexname: 'verifications_site_decided_time' }])
      await database.query('ANALYZE verifications')
      expect(await planOfFilter()).toMatch(/Index (Only )?Scan (Backward )?(using|on) verifications_site_decided_time/)
      const page = await createVerificationQueryRepository(database).listPage(siteId, { limit: 10, decidedBy: 'blocklist' })
      expect(page.map((entry) => entry.id)).toEqual(before)
      const allowed = await createVerificationQueryRepository(database).listPage(siteId, { limit: 10, decidedBy: 'allowlist' })
      expect(allowed.map((entry) => entry.id).sort()).toEqual(ids.slice(0, 5).sort())
    }, { migrated: false })
    // Two runs of the migrations on PGlite take most of the default 30 s on a busy machine.
  }, 120_000)

  it.skipIf(!available)("in the hour of a failed log-in: the hour's event goes on counting, before and after the upgrade, and an earlier hour's stays as it was", async () => {
    // The migrations run twice within the hour: on PGlite they take a while on a busy machine.
    await startWithinOneWindow(REPEATED_PERIOD_MS, 90_000)
    await withTestDatabase(kind, async (database) => {
      const migrations = await readMigrations()
      await migrate(database, migrations.filter((migration) => migration.version < 31))
      const account = await createAccountRepository(database).create('guessed@example.com', 'hash')
      if (account === undefined) throw new Error('the account was not created')
      const hourStart = repeatedHourOf(Date.now())
      const [first = '', second = '', third = '', fourth = ''] = Array.from({ length: 4 }, () => randomClientAddress())
      const attemptFrom = (clientIp: string) => ({ accountId: account.id, action: 'account.login_failed' as const, actor: { ...OPERATOR_ACTOR, type: 'anonymous' as const, clientIp } })
      const olderAttempt = (clientIp: string) =>
        database.query(olderRecordRepeated, [randomUUID(), account.id, 'account.login_failed', 'anonymous', null, null, null, clientIp, null, null, null, '{}', hourStart, clientIp, MAX_REPEATED_ADDRESSES])
      // The hour before, as the older version left it.
      const earlierHour = new Date(hourStart.getTime() - REPEATED_PERIOD_MS)
      await database.query(
        `INSERT INTO audit_events (id, created_at, account_id, action, actor_type, details) VALUES ($1, $2, $3, 'account.login_failed', 'anonymous', $4::jsonb)`,
        [randomUUID(), new Date(earlierHour.getTime() + 60_000), account.id, JSON.stringify({ count: 5, firstAt: earlierHour.toISOString(), addresses: [first] })],
      )
      await olderAttempt(first)
      await olderAttempt(second)

      // Up to this version's schema, which this version's repositories write (migration 037's actor columns too).
      expect(await migrate(database, migrations)).toEqual(migrations.filter((migration) => migration.version >= 31).map((migration) => migration.version))
      const auditLog = createAuditLogRepository(database)
      await auditLog.recordRepeated(attemptFrom(third), hourStart)
      // An instance of the older version, still running during a rolling upgrade, counts in the same event.
      await olderAttempt(fourth)
      await auditLog.recordRepeated(attemptFrom(first), hourStart)

      const events = await auditLog.listPage(account.id, { limit: 10, action: 'account.login_failed' })
      expect(events.map((event) => event.details)).toEqual([
        { count: 5, firstAt: expect.any(String), addresses: [first, second, third, fourth] },
        { count: 5, firstAt: earlierHour.toISOString(), addresses: [first] },
      ])
      expect(events[0]?.actor.clientIp).toBe(first)
      expect(Object.keys(events[0] ?? {})).not.toContain('repeatedHour')
    }, { migrated: false })
  }, 180_000)

  it.skipIf(!available)("with a flood's hours counted already: 042 folds each hour's hostnames and page actions beyond the bound into the reserved value", async () => {
    await withTestDatabase(kind, async (database) => {
      const migrations = await readMigrations()
      await migrate(database, migrations.filter((migration) => migration.version < 42))
      const siteId = randomUUID()
      const hour = Date.UTC(2025, 11, 2, 10)
      // Counted by 021's trigger, a row per value: the site's own page 30 times, then 150 made-up hosts and actions once each.
      await insertVerifications(database, Array.from({ length: 180 }, (_, index) => ({
        siteId, createdAt: new Date(hour + index * 10_000), action: 'block' as const, riskScore: 90,
        hostname: index < 30 ? 'shop.example' : `x${index}.shop.example`, pageAction: index < 30 ? 'login' : `x${index}`,
      })))
      const countsOf = async (kind: string) => new Map((await database.query<{ value: string; count: number }>(
        'SELECT value, count FROM verification_rollups WHERE site_id = $1 AND kind = $2', [siteId, kind],
      )).map((row) => [row.value, row.count]))
      expect((await countsOf('hostname')).size).toBe(151)
      expect(await migrate(database, migrations.filter((migration) => migration.version <= 42))).toEqual([42])
      for (const [kind, popular] of [['hostname', 'shop.example'], ['page_action', 'login']] as const) {
        const counts = await countsOf(kind)
        expect(counts.size).toBe(ROLLUP_VALUES_PER_HOUR + 1)
        expect(counts.get(popular)).toBe(30)
        expect(counts.get(OTHER_ROLLUP_VALUE)).toBe(51)
        expect([...counts.values()].reduce((sum, count) => sum + count, 0)).toBe(180)
      }
      // The other kinds are left as they were.
      expect(await countsOf('action')).toEqual(new Map([['block', 180]]))
    }, { migrated: false })
  }, 120_000)

  it.skipIf(!available)('with API keys already: they stay full and never expire, and still work', async () => {
    await withTestDatabase(kind, async (database) => {
      const migrations = await readMigrations()
      await migrate(database, migrations.filter((migration) => migration.version < 26))
      const account = await createAccountRepository(database).create('keys@example.com', 'hash')
      if (account === undefined) throw new Error('the account was not created')
      // As the version before 026 made a key: without access or expiry.
      await database.query('INSERT INTO api_keys (id, account_id, name, prefix, key_hash) VALUES ($1, $2, $3, $4, $5)', [randomUUID(), account.id, 'CI', 'tgak_old', 'old-hash'])
      // Up to this version's schema, which this version's key lookup reads (migration 036's disabled accounts too).
      expect(await migrate(database, migrations)).toEqual(migrations.filter((migration) => migration.version >= 26).map((migration) => migration.version))
      const apiKeys = createApiKeyRepository(database)
      // Migration 038's site list too: a key made before it reaches every site of its account.
      // Migration 043's address list too: a key made before it may be used from any address.
      expect(await apiKeys.listByAccount(account.id)).toEqual([expect.objectContaining({ name: 'CI', access: 'full', siteIds: null, expiresAt: null, allowedAddresses: null })])
      expect(await apiKeys.useByKeyHash('old-hash', '198.51.100.23')).toMatchObject({ outcome: 'used', access: 'full', siteIds: null, accountId: account.id })
    }, { migrated: false })
  })

  it.skipIf(!available)('with names typed with accents apart: 044 writes the names of sites, API keys and passkeys composed (NFC)', async () => {
    await withTestDatabase(kind, async (database) => {
      const migrations = await readMigrations()
      await migrate(database, migrations.filter((migration) => migration.version < 44))
      const account = await createAccountRepository(database).create('names@example.com', 'hash')
      if (account === undefined) throw new Error('the account was not created')
      const decomposed = 'Mu\u0308ller Cafe\u0301'
      const composed = 'M\u00fcller Caf\u00e9'
      // As an earlier release could store them: the repositories take names as given.
      const { site } = await createSiteRepository(database).create({ accountId: account.id, name: decomposed })
      const other = await createSiteRepository(database).create({ accountId: account.id, name: composed })
      await createApiKeyRepository(database).create(account.id, { name: decomposed, prefix: 'tgak_nfc', keyHash: 'nfc-hash', access: 'full', expiresAt: null }, 5)
      await database.query("INSERT INTO account_passkeys (id, account_id, credential_id, public_key, name) VALUES ($1, $2, 'credential-nfc', 'key', $3)", [randomUUID(), account.id, decomposed])
      expect(await migrate(database, migrations)).toEqual([44])
      const names = async (table: string) => (await database.query<{ name: string }>(`SELECT name FROM ${table} WHERE account_id = $1`, [account.id])).map((row) => row.name)
      expect((await names('sites')).sort()).toEqual([composed, composed])
      expect(await names('api_keys')).toEqual([composed])
      expect(await names('account_passkeys')).toEqual([composed])
      expect(site.name).toBe(decomposed)
      expect(other.site.name).toBe(composed)
    }, { migrated: false })
  })

  it.skipIf(!available)('whose accounts were all deleted before: the count starts past 0, so the setup code of its old logs is void', async () => {
    await withTestDatabase(kind, async (database) => {
      const migrations = await readMigrations()
      await migrate(database, migrations.filter((migration) => migration.version < 16))
      // A start recorded its secret check; its only account has been deleted since.
      await checkServerSecret(database, createKeyRing('x'.repeat(43)), 'development')
      const accounts = createAccountRepository(database)
      await accounts.create('gone@example.com', 'hash')
      await database.query('DELETE FROM accounts')
      await migrate(database, migrations)
      expect(await accounts.createdCount()).toBe(1)
    }, { migrated: false })
  })

  it.skipIf(!available)('counts only the accounts a transaction kept, exactly, across concurrent sign-ups', async () => {
    await withTestDatabase(kind, async (database) => {
      const accounts = createAccountRepository(database)
      await Promise.all(Array.from({ length: 8 }, (_, index) => accounts.create(`many-${index}@example.com`, 'hash')))
      await database.transaction(async (transaction) => {
        await createAccountRepository(transaction).create('undone@example.com', 'hash')
        throw new Error('rolled back')
      }).catch(() => undefined)
      expect(await accounts.createdCount()).toBe(8)
    })
  })

  it.skipIf(!available)('without accounts: the count starts at 0', async () => {
    await withTestDatabase(kind, async (database) => {
      expect(await createAccountRepository(database).createdCount()).toBe(0)
    })
  })
})

import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createAccountRepository, type AccountRepository } from '../../src/storage/sql/account-repository.js'
import { createApiKeyRepository, type ApiKeyRepository } from '../../src/storage/sql/api-key-repository.js'
import { createSessionRepository, type SessionRepository } from '../../src/storage/sql/session-repository.js'
import { migrate, readMigrations } from '../../src/storage/migrate.js'
import { openPostgresDatabase } from '../../src/storage/postgres/postgres-database.js'
import { hasPostgres, postgresUrl } from '../helpers/services.js'
import { databaseKinds, openTestDatabase, type TestDatabase } from '../helpers/storage.js'

const HOUR_MS = 3_600_000
const IDLE_TIMEOUT_MS = 72 * HOUR_MS
/** Where the keys of these tests are used from: a key without a list may be used from any address. */
const CLIENT_IP = '198.51.100.23'
/** What keys were before access levels and expiry: full, never expiring. */
const fullForever = { access: 'full', expiresAt: null } as const

describe.each(databaseKinds)('account, session and API key repositories on $kind', ({ kind, available }) => {
  let subject: TestDatabase
  let accounts: AccountRepository
  let sessions: SessionRepository
  let apiKeys: ApiKeyRepository

  beforeAll(async () => {
    if (!available) return
    subject = await openTestDatabase(kind)
    accounts = createAccountRepository(subject.database)
    sessions = createSessionRepository(subject.database)
    apiKeys = createApiKeyRepository(subject.database)
  })
  afterAll(async () => {
    if (!available) return
    await subject.database.close()
    await subject.dispose()
  })

  const newAccount = async (email = `${randomUUID()}@example.com`) => {
    const account = await accounts.create(email, 'hash')
    if (account === undefined) throw new Error('account not created')
    return { ...account, passwordHash: 'hash', twoFactorEnabledAt: null, disabledAt: null, credentialEpoch: 0 }
  }

  it.skipIf(!available)('creates an account and finds it by id and by e-mail in any letter case', async () => {
    const account = await newAccount('Mixed.Case@Example.com')
    expect(account).toEqual({ id: expect.any(String), email: 'Mixed.Case@Example.com', createdAt: expect.any(Date), passwordHash: 'hash', twoFactorEnabledAt: null, disabledAt: null, credentialEpoch: 0 })
    expect(await accounts.findByEmail('mixed.case@example.COM')).toEqual(account)
    const { passwordHash: _passwordHash, twoFactorEnabledAt: _twoFactorEnabledAt, disabledAt: _disabledAt, credentialEpoch: _credentialEpoch, ...withoutHash } = account
    expect(await accounts.findById(account.id)).toEqual(withoutHash)
    expect(await accounts.findByEmail('nobody@example.com')).toBeUndefined()
  })

  it.skipIf(!available)('lists an account\'s live sessions with where they were opened, keeps last use to the minute, and ends one', async () => {
    const account = await newAccount()
    const other = await newAccount()
    const laptop = await sessions.create(account, `laptop-${account.id}`, new Date(Date.now() + HOUR_MS), { userAgent: 'Laptop/1.0', clientIp: '198.51.100.7' })
    const phone = await sessions.create(account, `phone-${account.id}`, new Date(Date.now() + HOUR_MS), { userAgent: 'x'.repeat(600), clientIp: '2001:db8::1' })
    await sessions.create(account, `gone-${account.id}`, new Date(Date.now() - 1_000))
    const othersSession = await sessions.create(other, `other-${other.id}`, new Date(Date.now() + HOUR_MS))
    const listed = await sessions.listByAccount(account.id)
    expect(listed.map((session) => session.id).sort()).toEqual([laptop, phone].sort())
    expect(listed.find((session) => session.id === laptop)).toMatchObject({ userAgent: 'Laptop/1.0', clientIp: '198.51.100.7', lastSeenAt: expect.any(Date) })
    expect(listed.find((session) => session.id === phone)?.userAgent).toHaveLength(512)

    // A use within the minute writes nothing; one after it moves lastSeenAt.
    await subject.database.query(`UPDATE sessions SET last_seen_at = now() - interval '5 minutes' WHERE id = $1`, [laptop])
    const before = (await sessions.listByAccount(account.id)).find((session) => session.id === laptop)?.lastSeenAt
    await sessions.findByTokenHash(`laptop-${account.id}`, IDLE_TIMEOUT_MS)
    const after = (await sessions.listByAccount(account.id)).find((session) => session.id === laptop)?.lastSeenAt
    expect(after!.getTime() - before!.getTime()).toBeGreaterThanOrEqual(4 * 60_000)
    await sessions.findByTokenHash(`laptop-${account.id}`, IDLE_TIMEOUT_MS)
    expect((await sessions.listByAccount(account.id)).find((session) => session.id === laptop)?.lastSeenAt).toEqual(after)
    // The most recently used first.
    expect((await sessions.listByAccount(account.id))[0]?.id).toBe(laptop)

    // Judged by the database's clock, which writes it: a service clock 3 minutes ahead changes nothing.
    const serviceClock = vi.spyOn(Date, 'now').mockImplementation(() => performance.timeOrigin + performance.now() + 180_000)
    await sessions.findByTokenHash(`laptop-${account.id}`, IDLE_TIMEOUT_MS)
    serviceClock.mockRestore()
    expect((await sessions.listByAccount(account.id)).find((session) => session.id === laptop)?.lastSeenAt).toEqual(after)

    expect(await sessions.deleteOfAccount(other.id, laptop!)).toBe(false)
    expect(await sessions.deleteOfAccount(account.id, laptop!)).toBe(true)
    expect(await sessions.findByTokenHash(`laptop-${account.id}`, IDLE_TIMEOUT_MS)).toBeUndefined()
    expect((await sessions.listByAccount(other.id)).map((session) => session.id)).toEqual([othersSession])
  })

  it.skipIf(!available)('does not find a session left unused for longer than the idle limit (SESSION_IDLE_TIMEOUT), only one used within it', async () => {
    const account = await newAccount()
    const recent = await sessions.create(account, `recent-${account.id}`, new Date(Date.now() + 14 * 24 * HOUR_MS))
    const idle = await sessions.create(account, `idle-${account.id}`, new Date(Date.now() + 14 * 24 * HOUR_MS))
    await subject.database.query(`UPDATE sessions SET last_seen_at = now() - interval '71 hours' WHERE id = $1`, [recent])
    await subject.database.query(`UPDATE sessions SET last_seen_at = now() - interval '73 hours' WHERE id = $1`, [idle])
    expect(await sessions.findByTokenHash(`recent-${account.id}`, IDLE_TIMEOUT_MS)).toMatchObject({ sessionId: recent })
    expect(await sessions.findByTokenHash(`idle-${account.id}`, IDLE_TIMEOUT_MS)).toBeUndefined()
    // A longer limit (the operator's) finds it still.
    expect(await sessions.findByTokenHash(`idle-${account.id}`, 4 * 24 * HOUR_MS)).toMatchObject({ sessionId: idle })
  })

  it.skipIf(!available)('refuses a second account for the same address in another case, concurrently too', async () => {
    const email = `${randomUUID()}@example.com`
    const results = await Promise.all([accounts.create(email, 'a'), accounts.create(email.toUpperCase(), 'b')])
    expect(results.filter((result) => result !== undefined)).toHaveLength(1)
  })

  it.skipIf(!available)('finds a live session with its account; not an expired or deleted one', async () => {
    const account = await newAccount()
    const live = await sessions.create(account, 'live-hash', new Date(Date.now() + HOUR_MS))
    await sessions.create(account, 'expired-hash', new Date(Date.now() - 1_000))
    expect(await sessions.findByTokenHash('live-hash', IDLE_TIMEOUT_MS)).toEqual({ sessionId: live, accountId: account.id, email: account.email })
    expect(await sessions.findByTokenHash('expired-hash', IDLE_TIMEOUT_MS)).toBeUndefined()
    await sessions.delete(live ?? '')
    expect(await sessions.findByTokenHash('live-hash', IDLE_TIMEOUT_MS)).toBeUndefined()
  })

  it.skipIf(!available)('opens no session for a password that has changed since it was checked, also when the change commits while the session is opened', async () => {
    const account = await newAccount()
    await accounts.setPasswordHash(account.id, 'changed')
    expect(await sessions.create(account, `stale-${account.id}`, new Date(Date.now() + HOUR_MS))).toBeUndefined()
    expect(await sessions.create({ id: account.id, passwordHash: 'changed' }, `fresh-${account.id}`, new Date(Date.now() + HOUR_MS))).toEqual(expect.any(String))

    // A log-in that checked 'changed' opens its session while a change to 'newest' is under way.
    let opening: Promise<string | undefined> | undefined
    await subject.database.transaction(async (transaction) => {
      await createAccountRepository(transaction).setPasswordHash(account.id, 'newest')
      await createSessionRepository(transaction).deleteOthers(account.id, randomUUID())
      opening = sessions.create({ id: account.id, passwordHash: 'changed' }, `racing-${account.id}`, new Date(Date.now() + HOUR_MS))
      await new Promise((resolve) => setTimeout(resolve, 200))
    })
    expect(await opening).toBeUndefined()
    const rows = await subject.database.query<{ token_hash: string }>('SELECT token_hash FROM sessions WHERE account_id = $1', [account.id])
    expect(rows).toEqual([])
  })

  it.skipIf(!available)("drops the account's expired sessions when it opens a new one", async () => {
    const account = await newAccount()
    await sessions.create(account, `old-${account.id}`, new Date(Date.now() - 1_000))
    await sessions.create(account, `new-${account.id}`, new Date(Date.now() + HOUR_MS))
    const rows = await subject.database.query<{ token_hash: string }>('SELECT token_hash FROM sessions WHERE account_id = $1', [account.id])
    expect(rows.map((row) => row.token_hash)).toEqual([`new-${account.id}`])
  })

  it.skipIf(!available)('creates, lists, uses and revokes API keys per account', async () => {
    const owner = await newAccount()
    const other = await newAccount()
    const key = await apiKeys.create(owner.id, { name: 'CI', prefix: 'tgak_abcdefg', keyHash: `hash-${owner.id}`, ...fullForever }, 2)
    if (key === undefined) throw new Error('key not created')
    expect(key).toEqual({ id: expect.any(String), name: 'CI', prefix: 'tgak_abcdefg', access: 'full', siteIds: null, allowedAddresses: null, expiresAt: null, expired: false, createdAt: expect.any(Date), lastUsedAt: null })
    expect(await apiKeys.listByAccount(owner.id)).toEqual([key])
    expect(await apiKeys.listByAccount(other.id)).toEqual([])
    // The account's limit (2 here) holds; another account has its own.
    expect(await apiKeys.create(owner.id, { name: 'two', prefix: 'tgak_two', keyHash: `two-${owner.id}`, ...fullForever }, 2)).toBeDefined()
    expect(await apiKeys.create(owner.id, { name: 'three', prefix: 'tgak_three', keyHash: `three-${owner.id}`, ...fullForever }, 2)).toBeUndefined()
    expect(await apiKeys.listByAccount(owner.id)).toHaveLength(2)
    await apiKeys.delete(owner.id, (await apiKeys.listByAccount(owner.id))[1]?.id ?? '')

    expect(await apiKeys.useByKeyHash(`hash-${owner.id}`, CLIENT_IP)).toEqual({
      outcome: 'used',
      apiKeyId: key.id,
      name: 'CI',
      prefix: 'tgak_abcdefg',
      access: 'full',
      siteIds: null,
      accountId: owner.id,
      email: owner.email,
    })
    const [used] = await apiKeys.listByAccount(owner.id)
    expect(used?.lastUsedAt).toBeInstanceOf(Date)
    expect(await apiKeys.useByKeyHash('unknown', CLIENT_IP)).toBeUndefined()

    expect(await apiKeys.delete(other.id, key.id)).toBeUndefined()
    expect(await apiKeys.delete(owner.id, key.id)).toEqual({ name: 'CI', prefix: 'tgak_abcdefg' })
    expect(await apiKeys.useByKeyHash(`hash-${owner.id}`, CLIENT_IP)).toBeUndefined()
  })

  it.skipIf(!available)("keeps a key's access and expiry; an expired key, by the database's clock, is told apart and its use not recorded", async () => {
    const owner = await newAccount()
    const expiresAt = new Date(Date.now() + HOUR_MS)
    const key = await apiKeys.create(owner.id, { name: 'monitor', prefix: 'tgak_monitor', keyHash: `expiring-${owner.id}`, access: 'read', expiresAt }, 2)
    expect(key).toMatchObject({ access: 'read', expiresAt })
    expect(await apiKeys.useByKeyHash(`expiring-${owner.id}`, CLIENT_IP)).toMatchObject({ outcome: 'used', access: 'read' })
    // A new key's expiry is judged by the database's clock too: one its clock has passed makes nothing.
    const [{ databaseNow } = { databaseNow: new Date(0) }] = await subject.database.query<{ databaseNow: Date }>('SELECT now() AS "databaseNow"')
    const late = new Date(databaseNow.getTime() - 1)
    expect(await apiKeys.create(owner.id, { name: 'late', prefix: 'tgak_late', keyHash: `late-${owner.id}`, access: 'full', expiresAt: late }, 5)).toBeUndefined()
    expect(await apiKeys.isPast(late)).toBe(true)
    expect(await apiKeys.isPast(expiresAt)).toBe(false)
    expect((await apiKeys.listByAccount(owner.id)).map((listed) => listed.name)).toEqual(['monitor'])

    // Judged by the database's clock: a service clock past the expiry changes nothing.
    await subject.database.query("UPDATE api_keys SET expires_at = now() + interval '1 minute' WHERE id = $1", [key?.id])
    const serviceClock = vi.spyOn(Date, 'now').mockImplementation(() => performance.timeOrigin + performance.now() + 180_000)
    try {
      expect(await apiKeys.useByKeyHash(`expiring-${owner.id}`, CLIENT_IP)).toMatchObject({ outcome: 'used', access: 'read' })
    } finally {
      serviceClock.mockRestore()
    }

    // Expired a second ago by the database's clock, whatever this process's says.
    await subject.database.query("UPDATE api_keys SET expires_at = now() - interval '1 second', last_used_at = NULL WHERE id = $1", [key?.id])
    const [row] = await subject.database.query<{ expires_at: Date }>('SELECT expires_at FROM api_keys WHERE id = $1', [key?.id])
    expect(await apiKeys.useByKeyHash(`expiring-${owner.id}`, CLIENT_IP)).toEqual({ outcome: 'expired', expiresAt: row?.expires_at })
    // Still listed, for its owner to see, and not used since.
    expect(await apiKeys.listByAccount(owner.id)).toEqual([expect.objectContaining({ id: key?.id, expiresAt: row?.expires_at, lastUsedAt: null })])
  })

  it.skipIf(!available)('keeps a key\'s address list; a use from elsewhere is told apart and not recorded', async () => {
    const owner = await newAccount()
    const allowedAddresses = ['203.0.113.0/24', '2001:db8::/48']
    const key = await apiKeys.create(owner.id, { name: 'deploy', prefix: 'tgak_deploy', keyHash: `listed-${owner.id}`, access: 'full', allowedAddresses, expiresAt: null }, 2)
    expect(key).toMatchObject({ allowedAddresses })
    expect(await apiKeys.useByKeyHash(`listed-${owner.id}`, '198.51.100.7')).toEqual({
      outcome: 'address_refused',
      apiKeyId: key?.id,
      name: 'deploy',
      prefix: 'tgak_deploy',
      accountId: owner.id,
      email: owner.email,
    })
    expect(await apiKeys.listByAccount(owner.id)).toEqual([expect.objectContaining({ id: key?.id, lastUsedAt: null })])
    // An IPv4 client seen by a dual-stack listener, and an IPv6 one, within the ranges.
    expect(await apiKeys.useByKeyHash(`listed-${owner.id}`, '::ffff:203.0.113.9')).toMatchObject({ outcome: 'used', apiKeyId: key?.id })
    expect(await apiKeys.useByKeyHash(`listed-${owner.id}`, '2001:db8:0:ff::1')).toMatchObject({ outcome: 'used', apiKeyId: key?.id })
    expect((await apiKeys.listByAccount(owner.id))[0]?.lastUsedAt).toBeInstanceOf(Date)
    // An edit sets the list, and null lets the key be used from anywhere again.
    const narrowed = await apiKeys.update(owner.id, key?.id ?? '', { name: 'deploy', access: 'full', siteIds: null, allowedAddresses: ['203.0.113.9'], expiresAt: null })
    expect(narrowed?.allowedAddresses).toEqual(['203.0.113.9'])
    expect(await apiKeys.useByKeyHash(`listed-${owner.id}`, '203.0.113.10')).toMatchObject({ outcome: 'address_refused' })
    await apiKeys.update(owner.id, key?.id ?? '', { name: 'deploy', access: 'full', siteIds: null, allowedAddresses: null, expiresAt: null })
    expect(await apiKeys.useByKeyHash(`listed-${owner.id}`, '198.51.100.7')).toMatchObject({ outcome: 'used' })
  })

  it.skipIf(!available)('refuses an access level other than full and read', async () => {
    const owner = await newAccount()
    const writing = apiKeys.create(owner.id, { name: 'x', prefix: 'tgak_x', keyHash: `write-${owner.id}`, access: 'write' as 'full', expiresAt: null }, 1)
    await expect(writing).rejects.toThrow(/check/i)
  })

  it.skipIf(!available)("ends every account's sessions at once, saying how many each had, and voids their known browsers; API keys stay", async () => {
    // Whatever earlier cases left in this database goes too: counted apart from these two accounts'.
    const [first, second] = [await newAccount(), await newAccount()]
    for (const [account, count] of [[first, 2], [second, 1]] as const) {
      for (let each = 0; each < count; each += 1) await sessions.create(account, `everyone-${each}-${account.id}`, new Date(Date.now() + HOUR_MS))
    }
    await apiKeys.create(first.id, { name: 'kept', prefix: 'tgak_k', keyHash: `everyone-${first.id}`, ...fullForever }, 1)
    const epochs = async () => Promise.all([first, second].map(async (account) => (await accounts.findByEmail(account.email))?.credentialEpoch))

    const ended = await sessions.deleteEveryone()
    await accounts.forgetEveryonesKnownBrowsers()
    expect(ended.filter((each) => each.accountId === first.id || each.accountId === second.id).sort((a, b) => b.ended - a.ended)).toEqual([
      { accountId: first.id, ended: 2 },
      { accountId: second.id, ended: 1 },
    ])
    expect(await sessions.findByTokenHash(`everyone-0-${second.id}`, IDLE_TIMEOUT_MS)).toBeUndefined()
    expect(await subject.database.query('SELECT 1 FROM sessions')).toEqual([])
    expect(await epochs()).toEqual([1, 1])
    expect(await apiKeys.useByKeyHash(`everyone-${first.id}`, CLIENT_IP)).toMatchObject({ accountId: first.id })
    expect(await sessions.deleteEveryone()).toEqual([])
  })

  it.skipIf(!available)("removes an account's sessions and keys with the account", async () => {
    const account = await newAccount()
    await sessions.create(account, `cascade-${account.id}`, new Date(Date.now() + HOUR_MS))
    await apiKeys.create(account.id, { name: 'x', prefix: 'tgak_x', keyHash: `cascade-${account.id}`, ...fullForever }, 1)
    await subject.database.query('DELETE FROM accounts WHERE id = $1', [account.id])
    expect(await sessions.findByTokenHash(`cascade-${account.id}`, IDLE_TIMEOUT_MS)).toBeUndefined()
    expect(await apiKeys.useByKeyHash(`cascade-${account.id}`, CLIENT_IP)).toBeUndefined()
  })
})

describe.each(databaseKinds)('migration 009 (e-mail addresses in NFC) on $kind', ({ kind, available }) => {
  it.skipIf(!available)('rewrites an address typed with a combining accent, unless another account holds its normal form', async () => {
    const subject = await openTestDatabase(kind, { migrated: false })
    try {
      const migrations = await readMigrations()
      await migrate(subject.database, migrations.filter((migration) => migration.version < 9))
      const decomposed = `rene\u0301-${randomUUID()}@example.com`
      const clash = `jose\u0301-${randomUUID()}@example.com`
      // "ệ" with its two accents typed in either order: two addresses, neither in normal form, one
      // normal form. The older id gets it; the other is left as it is.
      const vietnamese = randomUUID()
      const accentsInOrder = { id: '00000000-0000-4000-8000-000000000001', email: `nguye\u0302\u0323n-${vietnamese}@example.com` }
      const accentsSwapped = { id: '00000000-0000-4000-8000-000000000002', email: `nguye\u0323\u0302n-${vietnamese}@example.com` }
      const accounts = [
        ...[decomposed, clash, clash.normalize('NFC')].map((email) => ({ id: randomUUID(), email })),
        accentsSwapped,
        accentsInOrder,
      ]
      for (const { id, email } of accounts) {
        await subject.database.query("INSERT INTO accounts (id, email, password_hash) VALUES ($1, $2, 'hash')", [id, email])
      }
      expect(await migrate(subject.database, migrations.filter((migration) => migration.version <= 9))).toEqual([9])
      const rows = await subject.database.query<{ email: string }>('SELECT email FROM accounts ORDER BY email')
      expect(rows.map((row) => row.email).sort()).toEqual(
        [decomposed.normalize('NFC'), clash, clash.normalize('NFC'), accentsInOrder.email.normalize('NFC'), accentsSwapped.email].sort(),
      )
    } finally {
      await subject.database.close()
      await subject.dispose()
    }
    // A fresh database migrated twice: some 10 s on the embedded one alone, more on a busy machine.
  }, 90_000)
})

describe('migration 009 on a PostgreSQL database that is not UTF-8', () => {
  it.skipIf(!hasPostgres)('applies, leaving the addresses as they are (normalization needs UTF-8)', async () => {
    const name = `tollgate_ascii_${randomUUID().replaceAll('-', '')}`
    const admin = new pg.Client({ connectionString: postgresUrl })
    await admin.connect()
    try {
      await admin.query(`CREATE DATABASE ${name} ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`)
      const url = new URL(postgresUrl)
      url.pathname = `/${name}`
      const database = await openPostgresDatabase({ connectionString: url.toString() })
      try {
        const migrations = await readMigrations()
        await migrate(database, migrations.filter((migration) => migration.version < 9))
        await database.query("INSERT INTO accounts (id, email, password_hash) VALUES ($1, 'owner@example.com', 'hash')", [randomUUID()])
        expect(await migrate(database, migrations)).toEqual(migrations.filter((migration) => migration.version >= 9).map((migration) => migration.version))
        expect(await database.query('SELECT email FROM accounts')).toEqual([{ email: 'owner@example.com' }])
      } finally {
        await database.close()
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name}`)
      await admin.end()
    }
  })
})

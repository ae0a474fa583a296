import { readFile } from 'node:fs/promises'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { parseCsv } from '../helpers/csv.js'
import { withDaysAround } from '../helpers/log-export.js'
import { insertVerifications } from '../helpers/verification-rows.js'
import { expectNoAccessibilityViolations, hasChromium, openLoggedInDashboard, type OpenDashboard } from './dashboard-support.js'

/** The log's download links in a real browser: a plain link with the session cookie, the filters shown, the file the server names. */
describe.skipIf(!hasChromium())("downloading a site's verification log from the dashboard", () => {
  let dashboard: OpenDashboard
  let page: Page
  let account: TestAccount
  let site: CreatedSite
  const now = Date.now()

  beforeAll(async () => {
    ;({ dashboard, account } = await openLoggedInDashboard())
    page = dashboard.page
    site = await createTestSite(dashboard.service.app, account, { name: 'Example shop' })
    await insertVerifications(dashboard.service.app.database, [
      { siteId: site.id, createdAt: new Date(now - 60_000), action: 'allow', hostname: 'shop.example', userAgent: '=HYPERLINK("https://evil.example")' },
      { siteId: site.id, createdAt: new Date(now - 30_000), action: 'block', riskScore: 90, anomalies: ['datacenter_ip', 'headless_browser'], hostname: 'shop.example' },
    ])
  }, 120_000)
  afterAll(() => dashboard?.close())

  /** The file a link downloads, and the UTC days of the click: the file is named by one of them (two at midnight). */
  const download = async (name: string) => {
    const { result: [file], days } = await withDaysAround(() => Promise.all([page.waitForEvent('download'), page.getByRole('link', { name }).click()]))
    const path = await file.path()
    return { fileName: file.suggestedFilename(), days, text: await readFile(path, 'utf8') }
  }

  it('downloads the rows of the filter shown as a CSV file', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/log`)
    await page.getByRole('heading', { name: 'Verification log' }).waitFor()
    await page.getByLabel('Action').selectOption('block')
    await expect.poll(() => page.getByRole('link', { name: 'Download CSV' }).getAttribute('href')).toContain('action=block')

    const { fileName, days, text } = await download('Download CSV')
    expect(days.map((day) => `tollgate-example-shop-verifications-${day}.csv`)).toContain(fileName)
    const [header, ...rows] = parseCsv(text)
    expect(header?.slice(0, 4)).toEqual(['id', 'siteId', 'createdAt', 'action'])
    expect(rows).toHaveLength(1)
    const row = Object.fromEntries((header ?? []).map((column, index) => [column, rows[0]?.[index]]))
    expect(row).toMatchObject({ siteId: site.id, action: 'block', riskScore: '90', anomalies: 'datacenter_ip;headless_browser', hostname: 'shop.example' })
    await expectNoAccessibilityViolations(page, 'verification log with its download links')
  })

  it('downloads the whole log as NDJSON, a user agent that looks like a formula as sent', async () => {
    await page.getByLabel('Action').selectOption('')
    await expect.poll(() => page.getByRole('link', { name: 'Download NDJSON' }).getAttribute('href')).not.toContain('action=')
    const { fileName, text } = await download('Download NDJSON')
    expect(fileName).toMatch(/^tollgate-example-shop-verifications-\d{4}-\d{2}-\d{2}\.ndjson$/)
    const lines = text.trimEnd().split('\n').map((line) => JSON.parse(line) as { action: string; userAgent: string | null })
    expect(lines.map((line) => line.action)).toEqual(['block', 'allow'])
    expect(lines[1]?.userAgent).toBe('=HYPERLINK("https://evil.example")')
  })
})

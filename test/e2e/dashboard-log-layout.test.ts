import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asScript, createTestSite, randomClientAddress, type CreatedSite } from '../helpers/dashboard-client.js'
import { insertVerifications } from '../helpers/verification-rows.js'
import { hasChromium, openLoggedInDashboard, saveScreenshot, type OpenDashboard } from './dashboard-support.js'

/**
 * The verification log at a laptop's width (1280 px, the browser's default here): its widest rows
 * (an IPv6 address, a browser's whole user agent, four anomalies, proof-of-work figures, a label
 * with a note) fit the page, so that its last columns are seen without scrolling sideways.
 */
describe.skipIf(!hasChromium())('the verification log at 1280 px', () => {
  let dashboard: OpenDashboard
  let page: Page
  let site: CreatedSite

  beforeAll(async () => {
    let account
    ;({ dashboard, account } = await openLoggedInDashboard())
    page = dashboard.page
    const { app } = dashboard.service
    site = await createTestSite(app, account, { name: 'Example shop' })
    const now = Date.now()
    const ids = await insertVerifications(
      app.database,
      Array.from({ length: 4 }, (_, index) => ({
        siteId: site.id,
        createdAt: new Date(now - index * 60_000),
        action: index === 0 ? 'allow' : 'block',
        anomalies: ['datacenter_ip', 'headless_browser', 'automation_detected', 'vpn_detected'],
        countryCode: 'NL',
        riskScore: index === 0 ? 5 : 95,
        pageAction: 'signup',
        hostname: 'www.shop.example',
        userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
        clientIp: randomClientAddress(),
        device: `dev_${'a'.repeat(40)}`,
        challengeId: randomUUID(),
      })),
    )
    await app.database.query('UPDATE verifications SET difficulty = 20, solve_time_ms = 12345 WHERE site_id = $1', [site.id])
    const labeled = await app.inject({
      method: 'PUT',
      url: `/api/v1/sites/${site.id}/verifications/${ids[0]}/label`,
      headers: asScript(account),
      payload: { label: 'fraudulent', reason: 'chargeback', note: 'order 1234, refunded after the bank called' },
    })
    expect(labeled.statusCode, labeled.body).toBe(200)
  }, 120_000)
  afterAll(() => dashboard?.close())

  it('shows every column, the label last, within the page without scrolling sideways', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/log`)
    await page.locator('.log tbody tr').first().waitFor()
    await expect.poll(() => page.locator('.log tbody tr').first().innerText()).toContain('Fraudulent')
    await saveScreenshot(page, 'verification-log-1280')
    const overflow = await page.evaluate(() => {
      const box = document.querySelector('.log')?.closest('.table-scroll')
      return { page: document.documentElement.scrollWidth - window.innerWidth, table: (box?.scrollWidth ?? 0) - (box?.clientWidth ?? 0) }
    })
    expect(overflow).toEqual({ page: 0, table: 0 })
    for (const column of ['Proof of work', 'Label']) {
      await expect.poll(() => page.getByRole('columnheader', { name: column }).isVisible()).toBe(true)
    }
    expect(await page.locator('.log tbody tr').first().innerText()).toContain('20\u00a0bits')
  })

  it('keeps the space between the words of the label buttons', async () => {
    for (const name of [/^Change the label/, /^Remove the label/]) {
      // The left edges of the words seen ("Change", "label"): a space apart, not touching.
      const gap = await page.getByRole('button', { name }).evaluate((button) => {
        const walker = document.createTreeWalker(button, NodeFilter.SHOW_TEXT)
        const edges: { left: number; right: number }[] = []
        for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
          if (node.textContent?.trim() === '' || node.parentElement?.closest('.visually-hidden') !== null) continue
          const range = document.createRange()
          range.selectNodeContents(node)
          const text = node.textContent ?? ''
          const start = text.length - text.trimStart().length
          range.setStart(node, start)
          edges.push(range.getBoundingClientRect())
        }
        return edges.length === 2 ? (edges[1]?.left ?? 0) - (edges[0]?.right ?? 0) : Number.NaN
      })
      expect(gap, String(name)).toBeGreaterThan(2)
    }
  })
})

import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CreatedSite } from '../helpers/dashboard-client.js'
import { insertVerifications } from '../helpers/verification-rows.js'
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'
import { blockedEvent } from '../helpers/webhook-site.js'
import { expectNoAccessibilityViolations, hasChromium, openLoggedInDashboardWithSite, type OpenDashboard } from './dashboard-support.js'

/** The element that has the keyboard focus: its tag and accessible text. */
function readFocus(page: Page): Promise<{ tag: string; label: string }> {
  return page.evaluate(() => {
    const element = document.activeElement
    return { tag: element?.tagName.toLowerCase() ?? '', label: element?.getAttribute('aria-label') ?? '' }
  })
}

/**
 * An operator whose receiver missed a blocked verification's event (it answered 500) fixes the
 * receiver, finds the failed delivery on the Webhook page and resends it with one button: the
 * outcome is said in a live region, the focus stays on the button, and the log lists the resend.
 */
describe.skipIf(!hasChromium())('resending a missed webhook event from the dashboard', () => {
  let dashboard: OpenDashboard
  let page: Page
  let site: CreatedSite
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await startWebhookReceiver()
    ;({ dashboard, site } = await openLoggedInDashboardWithSite({
      name: 'Resending shop',
      settings: { webhookUrl: receiver.url, webhookSecret: 'whsec-e2e-0123456789abcdef' },
    }))
    page = dashboard.page
  }, 120_000)
  afterAll(async () => {
    await dashboard?.close()
    await receiver?.close()
  })

  it('resends a failed delivery with its Resend button, says the outcome, and lists the resend', async () => {
    const { app } = dashboard.service
    const blockedAt = new Date(Date.now() - 600_000)
    const [verificationId] = await insertVerifications(app.database, [
      { siteId: site.id, createdAt: blockedAt, action: 'block', riskScore: 91, anomalies: ['datacenter_ip'], countryCode: 'NL', hostname: 'shop.example' },
    ])
    receiver.behave({ status: 500 })
    app.events.emit('verification.blocked', { ...blockedEvent(site.id), timestamp: blockedAt, verificationId: verificationId! })
    await app.webhooks.settle()
    const [failed] = await app.webhooks.deliveries.listRecent(site.id, 1)
    expect(failed).toMatchObject({ outcome: 'failed', statusCode: 500 })
    receiver.behave({ status: 204 })

    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/webhook`)
    const deliveries = page.locator('section[aria-labelledby="deliveries-heading"]')
    // A test event, delivered: no Resend on its row.
    await page.getByRole('button', { name: 'Send test event' }).click()
    await page.locator('.test-outcome .notice--success').waitFor()
    await deliveries.getByLabel('Outcome').selectOption('failed')
    await expect.poll(() => deliveries.locator('tbody tr').count()).toBe(1)
    const resend = deliveries.getByRole('button', { name: /^Resend the event of / })
    await resend.click()

    const outcome = deliveries.locator('.resend-outcome')
    await outcome.locator('.notice--success').waitFor()
    expect(await outcome.textContent()).toMatch(/^Resent\. Delivered: HTTP 204, \d+ ms \(verification\.blocked\)\.$/)
    expect(await outcome.getAttribute('aria-live')).toBe('polite')
    expect(await outcome.locator('[role], [aria-live]').count()).toBe(0)
    expect(await readFocus(page)).toMatchObject({ tag: 'button', label: expect.stringMatching(/^Resend the event of /) })
    // The receiver got the same event again, under its first id.
    const request = receiver.received.at(-1)!
    expect(JSON.parse(request.body)).toMatchObject({ id: failed!.id, data: { verificationId } })

    await deliveries.getByLabel('Outcome').selectOption('')
    const resent = deliveries.locator('tbody tr', { hasText: 'resent' })
    await resent.waitFor()
    expect(await resent.textContent()).toContain(failed!.id)
    // Only the failed row offers a resend: not the test event nor the delivered resend.
    expect(await deliveries.getByRole('button', { name: /^Resend the event of / }).count()).toBe(1)
    await expectNoAccessibilityViolations(page, 'webhook')
  }, 90_000)
})

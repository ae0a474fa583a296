import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { browserHeaders, humanSubmission } from '../helpers/core-flow.js'
import { asScript, createTestSite, randomClientAddress, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { expectNoAccessibilityViolations, hasChromium, openLoggedInDashboard, type OpenDashboard } from './dashboard-support.js'

const CHALLENGE_THRESHOLD = 60

/**
 * Feedback on verifications in a real browser: a label from the site's server (Siteverify
 * feedback) and one from the dashboard show as badges in the log, the log filters by label (its
 * download links too), and the analytics count them against the challenge threshold.
 */
describe.skipIf(!hasChromium())('labeling verifications in the dashboard', () => {
  let dashboard: OpenDashboard
  let page: Page
  let account: TestAccount
  let site: CreatedSite
  /** The log's row ids of the three verifications: labeled by the server, by the dashboard, and left alone. */
  const rows: { server: string; dashboard: string; unlabeled: string } = { server: '', dashboard: '', unlabeled: '' }

  /** A person's verification from its own address, redeemed at Siteverify: its token and verification_id. */
  async function verifyAndRedeem(): Promise<{ token: string; verificationId: string }> {
    const { app } = dashboard.service
    const remoteAddress = randomClientAddress()
    const headers = browserHeaders(site.siteKey)
    const challenge = (await app.inject({ method: 'POST', url: '/api/v1/challenge', remoteAddress, headers })).json<Challenge>()
    const verified = await app.inject({ method: 'POST', url: '/api/v1/verify', remoteAddress, headers, payload: humanSubmission(challenge) })
    const token = verified.json<{ token: string }>().token
    const answer = await app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response: token } })
    expect(answer.json<{ success: boolean }>().success, answer.body).toBe(true)
    return { token, verificationId: answer.json<{ metadata: { verification_id: string } }>().metadata.verification_id }
  }

  beforeAll(async () => {
    ;({ dashboard, account } = await openLoggedInDashboard())
    page = dashboard.page
    const { app } = dashboard.service
    site = await createTestSite(app, account, { name: 'Feedback shop', settings: { challengeThreshold: CHALLENGE_THRESHOLD, blockThreshold: 90 } })
    const made = [await verifyAndRedeem(), await verifyAndRedeem(), await verifyAndRedeem()]
    await app.verificationLog.flush()
    const listed = (await app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications`, headers: asScript(account) })).json<{
      items: { id: string; verificationId: string; riskScore: number }[]
    }>().items
    const rowOf = (verificationId: string) => listed.find((item) => item.verificationId === verificationId)!
    // A person's score is below the threshold: a fraudulent label on it is a miss.
    expect(rowOf(made[0]!.verificationId).riskScore).toBeLessThan(CHALLENGE_THRESHOLD)
    rows.server = rowOf(made[0]!.verificationId).id
    rows.dashboard = rowOf(made[1]!.verificationId).id
    rows.unlabeled = rowOf(made[2]!.verificationId).id

    // The site's server, days later, with its secret key and the token.
    const feedback = await fetch(`${dashboard.origin}/api/v1/siteverify/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ secret: site.secretKey, response: made[0]!.token, label: 'fraudulent', reason: 'chargeback' }),
    })
    expect(feedback.status, await feedback.clone().text()).toBe(200)
  }, 120_000)
  afterAll(() => dashboard?.close())

  const row = (id: string) => page.locator(`tr[data-id="${id}"]`)

  it("shows the server's label as a badge, and labels a verification from the dashboard", async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/log`)
    await page.getByRole('heading', { name: 'Verification log' }).waitFor()
    const server = row(rows.server)
    await expect.poll(() => server.locator('.badge--fraudulent').textContent()).toBe('Fraudulent')
    expect(await server.locator('.log__label-details').textContent()).toBe('Chargeback, from your server')
    expect(await row(rows.unlabeled).locator('.log__label').count()).toBe(0)

    await row(rows.dashboard).getByRole('button', { name: /^Label verification/ }).click()
    const dialog = page.getByRole('dialog', { name: 'Label verification' })
    await dialog.getByRole('radio', { name: 'Legitimate' }).check()
    await dialog.getByLabel('Reason (optional)').selectOption('passed_two_factor')
    await dialog.getByLabel('Note (optional)').fill('order 1234')
    await expectNoAccessibilityViolations(page, 'label dialog')
    await dialog.getByRole('button', { name: 'Save label' }).click()
    await dialog.waitFor({ state: 'hidden' })

    const labeled = row(rows.dashboard)
    await expect.poll(() => labeled.locator('.badge--legitimate').textContent()).toBe('Legitimate')
    expect(await labeled.locator('.log__label-details').textContent()).toBe('Passed two-factor, from the dashboard')
    expect(await labeled.locator('.log__label-note').textContent()).toContain('order 1234')
    await expectNoAccessibilityViolations(page, 'verification log with labels')
  })

  it('filters the log by label, and carries the filter into the download links', async () => {
    const label = page.getByLabel('Label', { exact: true })
    await label.selectOption('fraudulent')
    await expect.poll(() => page.locator('tbody tr').evaluateAll((found) => found.map((element) => element.getAttribute('data-id')))).toEqual([rows.server])
    expect(await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href')).toContain('label=fraudulent')
    expect(new URL(page.url()).searchParams.get('label')).toBe('fraudulent')

    await label.selectOption('none')
    await expect.poll(() => page.locator('tbody tr').evaluateAll((found) => found.map((element) => element.getAttribute('data-id')))).toEqual([rows.unlabeled])
    await label.selectOption('')
    await expect.poll(() => page.locator('tbody tr').count()).toBe(3)
  })

  it('counts the labels, the missed one among them, on the analytics page', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/analytics`)
    const panel = page.getByRole('region', { name: 'Feedback' })
    const figure = (key: string) => panel.locator(`[data-feedback="${key}"] dd`).textContent()
    await expect.poll(() => figure('missed')).toBe('1')
    expect(await figure('legitimate')).toBe('1')
    expect(await figure('fraudulent')).toBe('1')
    expect(await figure('false-alarms')).toBe('0')
    expect(await page.getByRole('columnheader', { name: 'Labeled fraudulent' }).count()).toBe(1)
    await expectNoAccessibilityViolations(page, 'analytics with feedback')
  })
})

import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { browserHeaders, humanSubmission } from '../helpers/core-flow.js'
import { asScript, createTestAccount, createTestSite, randomClientAddress, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { shareSite } from '../helpers/site-sharing.js'
import { insertVerifications } from '../helpers/verification-rows.js'
import { expectNoAccessibilityViolations, hasChromium, launchBrowser, openLoggedInDashboard, type Browser, type OpenDashboard } from './dashboard-support.js'

const CHALLENGE_THRESHOLD = 60

/**
 * Feedback on verifications in a real browser: a label from the site's server (Siteverify
 * feedback) and one from the dashboard show as badges in the log, the log filters by label (its
 * download links too) and by the site's list that decided a row, finds a row by Siteverify's verification_id, the analytics count them
 * against the actions logged (a threshold changed later moves nothing), a label is removed after
 * a confirmation, and a viewer sees the labels without the controls.
 */
describe.skipIf(!hasChromium())('labeling verifications in the dashboard', () => {
  let dashboard: OpenDashboard
  let page: Page
  let account: TestAccount
  let site: CreatedSite
  /** The log's row ids of the three verifications: labeled by the server, by the dashboard, and left alone. */
  const rows: { server: string; dashboard: string; unlabeled: string } = { server: '', dashboard: '', unlabeled: '' }
  /** Siteverify's verification_id of the row the dashboard labels. */
  let dashboardVerificationId = ''
  const browsers: Browser[] = []

  /** A person's verification of `on` from `remoteAddress`: its challenge (the row's verificationId) and its token, if allowed (a blocked one has none). */
  async function verifyFrom(on: CreatedSite, remoteAddress: string): Promise<{ challengeId: string; token: string | undefined }> {
    const { app } = dashboard.service
    const headers = browserHeaders(on.siteKey)
    const challenge = (await app.inject({ method: 'POST', url: '/api/v1/challenge', remoteAddress, headers })).json<Challenge>()
    const verified = await app.inject({ method: 'POST', url: '/api/v1/verify', remoteAddress, headers, payload: humanSubmission(challenge) })
    expect(verified.statusCode, verified.body).toBe(200)
    return { challengeId: challenge.challengeId, token: verified.json<{ token?: string }>().token }
  }

  /** A person's verification from its own address, redeemed at Siteverify: its token and verification_id. */
  async function verifyAndRedeem(): Promise<{ token: string; verificationId: string }> {
    const { app } = dashboard.service
    const token = tokenOf(await verifyFrom(site, randomClientAddress()))
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
    const rowOf = (verificationId: string) => rowWithVerificationId(listed, verificationId)
    // A person's score is below the threshold: a fraudulent label on it is a miss.
    expect(rowOf(made[0]!.verificationId).riskScore).toBeLessThan(CHALLENGE_THRESHOLD)
    rows.server = rowOf(made[0]!.verificationId).id
    rows.dashboard = rowOf(made[1]!.verificationId).id
    rows.unlabeled = rowOf(made[2]!.verificationId).id
    dashboardVerificationId = made[1]!.verificationId

    // The site's server, days later, with its secret key and the token.
    const feedback = await fetch(`${dashboard.origin}/api/v1/siteverify/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ secret: site.secretKey, response: made[0]!.token, label: 'fraudulent', reason: 'chargeback' }),
    })
    expect(feedback.status, await feedback.clone().text()).toBe(200)
  }, 120_000)
  afterAll(async () => {
    await Promise.all(browsers.map((browser) => browser.close()))
    await dashboard?.close()
  })

  const row = (id: string) => page.locator(`tr[data-id="${id}"]`)
  /** The ids of the log's rows shown, top to bottom. */
  const shownRowIds = () => page.locator('tbody tr').evaluateAll((found) => found.map((element) => element.getAttribute('data-id')))
  /** What the row's Label cell shows (badge, reason, source, note and buttons), as read. */
  const labelCellText = (id: string) => row(id).locator('td').last().innerText()
  const focusedName = () => page.evaluate(() => document.activeElement?.textContent ?? '')

  it("shows the server's label as a badge, and labels a verification from the dashboard", async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/log`)
    await page.getByRole('heading', { name: 'Verification log' }).waitFor()
    await expect.poll(() => labelCellText(rows.server)).toContain('Fraudulent')
    expect(await labelCellText(rows.server)).toContain('Chargeback, from your server')
    expect(await labelCellText(rows.unlabeled)).not.toMatch(/Fraudulent|Legitimate/)

    await row(rows.dashboard).getByRole('button', { name: /^Label verification/ }).click()
    const dialog = page.getByRole('dialog', { name: 'Label verification' })
    // Nothing chosen for an unlabeled row: Save waits for a choice.
    expect(await dialog.getByRole('radio', { name: 'Legitimate' }).isChecked()).toBe(false)
    expect(await dialog.getByRole('radio', { name: 'Fraudulent' }).isChecked()).toBe(false)
    expect(await dialog.getByRole('button', { name: 'Save label' }).isDisabled()).toBe(true)
    expect(await dialog.innerText()).toContain(dashboardVerificationId)
    await dialog.getByRole('radio', { name: 'Legitimate' }).check()
    // Only the reasons that go with the label are offered.
    const reasons = await dialog.getByLabel('Reason (optional)').locator('option').allInnerTexts()
    expect(reasons).toContain('Passed two-factor')
    expect(reasons).not.toContain('Chargeback')
    await dialog.getByLabel('Reason (optional)').selectOption('passed_two_factor')
    // A note the API refuses (a right-to-left override): its message under the note, the dialog open.
    const note = dialog.getByLabel('Note (optional)')
    await note.fill('order \u202E4321')
    await dialog.getByRole('button', { name: 'Save label' }).click()
    await expect.poll(() => note.getAttribute('aria-invalid')).toBe('true')
    expect(await dialog.innerText()).toContain('bidirectional override')
    await note.fill('order 1234')
    await expectNoAccessibilityViolations(page, 'label dialog')
    await dialog.getByRole('button', { name: 'Save label' }).click()
    await dialog.waitFor({ state: 'hidden' })

    await expect.poll(() => labelCellText(rows.dashboard)).toContain('Legitimate')
    expect(await labelCellText(rows.dashboard)).toContain('Passed two-factor, from the dashboard')
    expect(await labelCellText(rows.dashboard)).toContain('order 1234')
    // Said politely, and the keyboard back on the row's label button.
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Labeled legitimate' }).count()).toBe(1)
    await expect.poll(focusedName).toMatch(/^Change the label of verification /)
    await expectNoAccessibilityViolations(page, 'verification log with labels')
  })

  it('filters the log by label, and carries the filter into the download links', async () => {
    const label = page.getByLabel('Label', { exact: true })
    await label.selectOption('fraudulent')
    await expect.poll(shownRowIds).toEqual([rows.server])
    expect(await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href')).toContain('label=fraudulent')
    expect(new URL(page.url()).searchParams.get('label')).toBe('fraudulent')

    await label.selectOption('none')
    await expect.poll(shownRowIds).toEqual([rows.unlabeled])
    await label.selectOption('')
    await expect.poll(() => page.locator('tbody tr').count()).toBe(3)
  })

  it("finds a row by the verification_id Siteverify answered, typed into the reference search", async () => {
    await page.getByLabel('Reference', { exact: true }).fill(dashboardVerificationId)
    await page.getByRole('button', { name: 'Find' }).click()
    await expect.poll(shownRowIds).toEqual([rows.dashboard])
    expect(await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href')).toContain(`verificationId=${dashboardVerificationId}`)
    // A row's own id in full (a reference quoted whole) downloads that row, as the table shows it.
    // The link is read at once, as a quick Download would follow it: while the search loads, the
    // page shown is the previous search's (found by verification_id), and the link must not be
    // chosen from it (the locator waits for an enabled link, which has an href, no poll).
    await page.getByLabel('Reference', { exact: true }).fill(rows.unlabeled)
    await page.getByRole('button', { name: 'Find' }).click()
    const href = await page.locator('a[href]', { hasText: 'Download CSV' }).getAttribute('href')
    expect(href).toContain(`reference=${rows.unlabeled}`)
    expect(href).not.toContain('verificationId=')
    await expect.poll(shownRowIds).toEqual([rows.unlabeled])
    const csv = await page.evaluate(async (link) => (await fetch(link!)).text(), href)
    expect(csvIds(csv)).toEqual([rows.unlabeled])
    await page.getByRole('button', { name: 'Show all' }).click()
    await expect.poll(() => page.locator('tbody tr').count()).toBe(3)
  })

  it('counts the labels, the missed one among them, on the analytics page', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/analytics`)
    const panel = page.getByRole('region', { name: 'Feedback' })
    await expect.poll(() => figures(panel)).toEqual({
      Legitimate: '1',
      Fraudulent: '1',
      'Missed (fraudulent, allowed)': '1',
      'False alarms (legitimate, challenged or blocked)': '0',
    })
    expect(await panel.innerText()).toContain('changing the thresholds does not move these')
    expect(await page.getByRole('columnheader', { name: 'Labeled fraudulent' }).count()).toBe(1)
    await expectNoAccessibilityViolations(page, 'analytics with feedback')
  })

  it('counts what each verification was answered then: a lower threshold afterwards turns no miss into a catch', async () => {
    // With the challenge threshold at 0, the missed verification's score would be challenged now.
    const lowered = await dashboard.service.app.inject({
      method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(account), payload: { settings: { challengeThreshold: 0, blockThreshold: 90 } },
    })
    expect(lowered.statusCode, lowered.body).toBe(200)
    await page.reload()
    const panel = page.getByRole('region', { name: 'Feedback' })
    await expect.poll(() => figures(panel)).toMatchObject({ 'Missed (fraudulent, allowed)': '1', 'False alarms (legitimate, challenged or blocked)': '0' })
  })

  it('removes a label after a confirmation, says so, and keeps the keyboard on the row', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/log`)
    await row(rows.dashboard).getByRole('button', { name: /^Remove the label of verification / }).click()
    const confirm = page.getByRole('dialog', { name: 'Remove label' })
    expect(await confirm.innerText()).toContain('Remove the legitimate label of verification')
    // Cancel leaves it.
    await confirm.getByRole('button', { name: 'Cancel' }).click()
    await confirm.waitFor({ state: 'hidden' })
    expect(await labelCellText(rows.dashboard)).toContain('Legitimate')
    await row(rows.dashboard).getByRole('button', { name: /^Remove the label of verification / }).click()
    await confirm.getByRole('button', { name: 'Remove label' }).click()
    await confirm.waitFor({ state: 'hidden' })
    await expect.poll(() => labelCellText(rows.dashboard)).not.toContain('Legitimate')
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Label removed' }).count()).toBe(1)
    await expect.poll(focusedName).toMatch(/^Label verification /)
  })

  it("shows a viewer the labels but no label controls, nor an invitation to label", async () => {
    const viewerAccount = await createTestAccount(dashboard.service.app)
    await shareSite(dashboard.service.app, account, viewerAccount, site.id, 'viewer')
    const browser = await launchBrowser(dashboard.origin)
    browsers.push(browser)
    const [name = '', value = ''] = viewerAccount.cookie.split(/=(.*)/s)
    await browser.context.addCookies([{ name, value, url: dashboard.origin }])
    const viewer = await browser.context.newPage()
    await viewer.goto(`${dashboard.origin}/dashboard/sites/${site.id}/log`)
    const serverRow = viewer.locator(`tr[data-id="${rows.server}"]`)
    await expect.poll(() => serverRow.locator('td').last().innerText()).toContain('Fraudulent')
    expect(await viewer.getByRole('button', { name: /label/i }).count()).toBe(0)
    await viewer.goto(`${dashboard.origin}/dashboard/sites/${site.id}/analytics`)
    const panel = viewer.getByRole('region', { name: 'Feedback' })
    await expect.poll(() => figures(panel)).toMatchObject({ Fraudulent: '1' })
    // Where there are no labels yet, a viewer is not told to label.
    const unlabeled = await createTestSite(dashboard.service.app, account, { name: 'Quiet shop' })
    await shareSite(dashboard.service.app, account, viewerAccount, unlabeled.id, 'viewer')
    await viewer.goto(`${dashboard.origin}/dashboard/sites/${unlabeled.id}/analytics`)
    const empty = viewer.getByRole('region', { name: 'Feedback' })
    await expect.poll(() => empty.innerText()).toContain('No labeled verifications in this range.')
    expect(await empty.innerText()).not.toContain('Label verifications')
  })

  it("marks what the site's allowlist decided in the log, and counts a fraud it let in apart from the misses", async () => {
    const { app } = dashboard.service
    const office = randomClientAddress()
    const listed = await createTestSite(app, account, { name: 'Office shop', settings: { allowedAddresses: [office] } })
    const token = tokenOf(await verifyFrom(listed, office))
    await app.verificationLog.flush()
    const labeled = await app.inject({ method: 'POST', url: '/api/v1/siteverify/feedback', payload: { secret: listed.secretKey, response: token, label: 'fraudulent' } })
    expect(labeled.statusCode, labeled.body).toBe(200)

    await page.goto(`${dashboard.origin}/dashboard/sites/${listed.id}/log`)
    const officeRow = page.locator('tbody tr')
    await expect.poll(() => officeRow.locator('td').nth(1).innerText()).toContain('allowlist')
    expect(await officeRow.locator('.badge--list').getAttribute('title')).toContain('allowlist')
    // Its meaning is read out, not only in the title a pointer shows: "decided by the allowlist".
    expect(await officeRow.locator('.badge--list').textContent()).toBe('decided by the allowlist')
    await page.goto(`${dashboard.origin}/dashboard/sites/${listed.id}/analytics`)
    const panel = page.getByRole('region', { name: 'Feedback' })
    await expect.poll(() => figures(panel)).toEqual({
      Legitimate: '0',
      Fraudulent: '1',
      'Missed (fraudulent, allowed)': '0',
      'False alarms (legitimate, challenged or blocked)': '0',
      'Fraudulent, let in by your allowlist': '1',
      'Legitimate, turned away by your blocklist': '0',
    })
  })

  it("filters the log by the list that decided a row, from the first page, keeps the filter in the address and the download links, and a reference search drops it", async () => {
    const { app } = dashboard.service
    const [office, blocked] = [randomClientAddress(), randomClientAddress()]
    const listed = await createTestSite(app, account, { name: 'Listed shop', settings: { allowedAddresses: [office], blockedAddresses: [blocked] } })
    // Twelve older rows of the model's, so that the log has a second page of ten.
    const minuteAgo = Date.now() - 60_000
    await insertVerifications(app.database, Array.from({ length: 12 }, (_, index) => ({ siteId: listed.id, createdAt: new Date(minuteAgo - index * 1000), action: 'allow' as const })))
    const made = { office: await verifyFrom(listed, office), blocked: await verifyFrom(listed, blocked), stranger: await verifyFrom(listed, randomClientAddress()) }
    await app.verificationLog.flush()
    const listedRows = (await app.inject({ method: 'GET', url: `/api/v1/sites/${listed.id}/verifications?limit=100`, headers: asScript(account) })).json<{
      items: { id: string; verificationId: string | null }[]
    }>().items
    const idOf = ({ challengeId }: { challengeId: string }) => rowWithVerificationId(listedRows, challengeId).id

    await page.goto(`${dashboard.origin}/dashboard/sites/${listed.id}/log?rows=10`)
    await page.getByRole('heading', { name: 'Verification log' }).waitFor()
    await expect.poll(() => page.locator('tbody tr').count()).toBe(10)
    const pagerPosition = page.locator('.pager__position')
    const logStatus = page.getByRole('status').and(page.locator('.log__count'))
    await page.getByRole('button', { name: 'Older' }).click()
    await pagerPosition.filter({ hasText: 'Page 2' }).waitFor()
    await logStatus.filter({ hasText: 'Showing 5 verifications on page 2.' }).waitFor()

    const decidedBy = page.getByLabel('Decided by', { exact: true })
    expect(await decidedBy.locator('option').allInnerTexts()).toEqual(['The model or a list', 'The allowlist', 'The blocklist'])
    await decidedBy.selectOption({ label: 'The blocklist' })
    await expect.poll(shownRowIds).toEqual([idOf(made.blocked)])
    // Said to a screen reader as well as shown: the one row the page now holds.
    await logStatus.filter({ hasText: /^Showing one verification\.$/ }).waitFor()
    expect(await pagerPosition.innerText()).toBe('Page 1')
    expect(new URL(page.url()).searchParams.get('decidedBy')).toBe('blocklist')
    const decidedByOf = async (name: string) => new URL((await page.getByRole('link', { name }).getAttribute('href'))!, page.url()).searchParams.get('decidedBy')
    expect(await decidedByOf('Download NDJSON')).toBe('blocklist')
    expect(await decidedByOf('Download CSV')).toBe('blocklist')
    const href = await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href')
    const csv = await page.evaluate(async (link) => (await fetch(link)).text(), href!)
    expect(csvIds(csv)).toEqual([idOf(made.blocked)])
    await expectNoAccessibilityViolations(page, 'verification log filtered by the blocklist')

    // A reload, or the link shared, opens the same view.
    await page.reload()
    await page.getByRole('heading', { name: 'Verification log' }).waitFor()
    expect(await decidedBy.inputValue()).toBe('blocklist')
    await expect.poll(shownRowIds).toEqual([idOf(made.blocked)])

    await decidedBy.selectOption({ label: 'The allowlist' })
    await expect.poll(shownRowIds).toEqual([idOf(made.office)])
    // Nothing the allowlist decided was blocked: the status line says why the page is empty.
    await page.getByLabel('Action', { exact: true }).selectOption('block')
    await logStatus.filter({ hasText: /^No verification in this view was decided by the allowlist\.$/ }).waitFor()
    expect(await page.locator('tbody tr').count()).toBe(0)
    await page.getByLabel('Action', { exact: true }).selectOption('')
    await expect.poll(shownRowIds).toEqual([idOf(made.office)])

    // A visitor's reference is sought whatever list decided: the filter would hide the model's row.
    await page.getByLabel('Reference', { exact: true }).fill(idOf(made.stranger).slice(0, 13))
    await page.getByRole('button', { name: 'Find' }).click()
    await expect.poll(shownRowIds).toEqual([idOf(made.stranger)])
    expect(await decidedBy.inputValue()).toBe('')
    expect(new URL(page.url()).searchParams.has('decidedBy')).toBe(false)
    expect(await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href')).not.toContain('decidedBy')
    expect(dashboard.pageErrors).toEqual([])
  })
})

/** The token of a verification that was allowed, failing clearly when it was answered none (blocked). */
function tokenOf({ token }: { token: string | undefined }): string {
  if (token === undefined) throw new Error('The verification was answered no token: it was not allowed')
  return token
}

/** The log's row of a verification (its verificationId, the challenge's id), failing clearly when the log has none. */
function rowWithVerificationId<Row extends { verificationId: string | null }>(rows: readonly Row[], verificationId: string): Row {
  const found = rows.find((item) => item.verificationId === verificationId)
  if (found === undefined) throw new Error(`The log has no row of verification ${verificationId}`)
  return found
}

/** The row ids of a CSV export, in its order (the first column, after the header). */
function csvIds(csv: string): string[] {
  return csv
    .trim()
    .split('\r\n')
    .slice(1)
    .map((line) => line.split(',')[0] ?? '')
}

/** The Feedback card's figures as read: each visible term with its count. */
async function figures(panel: ReturnType<Page['getByRole']>): Promise<Record<string, string>> {
  const terms = await panel.locator('dt').allInnerTexts()
  const counts = await panel.locator('dd').allInnerTexts()
  return Object.fromEntries(terms.map((term, index) => [term, counts[index] ?? '']))
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asScript, type TestAccount } from '../helpers/dashboard-client.js'
import { hasChromium, openLoggedInDashboard, type OpenDashboard } from './dashboard-support.js'

/** What an operator on a bad connection gets when the dashboard's answer is lost and they try again. */
describe.skipIf(!hasChromium())('the dashboard when an answer is lost', () => {
  let dashboard: OpenDashboard
  let account: TestAccount

  beforeAll(async () => {
    ;({ dashboard, account } = await openLoggedInDashboard())
  }, 120_000)
  afterAll(() => dashboard?.close())

  it('creates one site when "Create site" is pressed again after its answer was lost, and shows its one-time secret', async () => {
    const { page, origin, service } = dashboard
    let firstSecretKey = ''
    let postsSeen = 0
    await page.route('**/api/v1/sites', async (route) => {
      if (route.request().method() !== 'POST') return route.continue()
      postsSeen += 1
      if (postsSeen > 1) return route.continue()
      // The service creates the site; its answer never reaches the browser.
      const answer = await route.fetch()
      expect(answer.status()).toBe(201)
      firstSecretKey = ((await answer.json()) as { secretKey: string }).secretKey
      return route.abort('connectionreset')
    })

    await page.goto(`${origin}/dashboard/sites/new`)
    await page.getByLabel('Name').fill('Flaky shop')
    await page.getByRole('button', { name: 'Create site' }).click()
    await page.getByText('The service could not be reached').waitFor()
    await page.getByRole('button', { name: 'Create site' }).click()
    await page.getByRole('heading', { name: 'Flaky shop is ready' }).waitFor()

    expect(postsSeen).toBe(2)
    // The secret the lost answer held is the one shown: the site it belongs to is the only one.
    expect(await page.getByLabel('Secret key', { exact: true }).inputValue()).toBe(firstSecretKey)
    const listed = await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asScript(account) })
    const names = listed.json<{ items: { name: string }[] }>().items.map((site) => site.name)
    expect(names.filter((name) => name === 'Flaky shop')).toHaveLength(1)
  }, 60_000)
})

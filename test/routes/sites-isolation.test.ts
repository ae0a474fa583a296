import { afterAll, beforeAll, describe } from 'vitest'
import { dashboardSiteRoutes, describeSiteRouteAuthCases } from '../helpers/auth-cases.js'
import { createTestAccount, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

describe('site routes: authentication and isolation', () => {
  let service: TestApp
  let owner: TestAccount
  let stranger: TestAccount
  beforeAll(async () => {
    service = await buildTestApp()
    owner = await createTestAccount(service.app)
    stranger = await createTestAccount(service.app)
  })
  afterAll(() => service.close())

  describeSiteRouteAuthCases(dashboardSiteRoutes, () => ({ app: service.app, owner, stranger }))
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dashboardSiteRoutes, describeSiteRouteAuthCases, webhookSiteRoutes } from '../helpers/auth-cases.js'
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

  it('lists every route under /api/v1/sites/{id} that the API documents, so that a new one cannot skip these checks', async () => {
    const document = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, Record<string, unknown>> }>()
    const documented = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/api/v1/sites/{id}'))
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path.replace(/\{accountId\}/, '{ownerId}')}`))
    const listed = [...dashboardSiteRoutes, ...webhookSiteRoutes].map((route) => `${route.method} ${route.path.split('?')[0]}`)
    expect(documented.sort()).toEqual(listed.sort())
  })

  describeSiteRouteAuthCases([...dashboardSiteRoutes, ...webhookSiteRoutes], () => ({ app: service.app, owner, stranger }))
})

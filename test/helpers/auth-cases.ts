import { randomUUID } from 'node:crypto'
import type { HTTPMethods } from 'fastify'
import { afterAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { isUuid } from '../../src/domain/uuid.js'
import { asBrowser, asScript, createTestSite, OWN_ORIGIN, type TestAccount } from './dashboard-client.js'
import { insertVerifications } from './verification-rows.js'

/**
 * A route under /api/v1/sites/{id}: `path` contains `{id}`, and may contain `{ownerId}` (the
 * owner's account id), `{invitationId}` (a pending invitation of the site, made for the test),
 * `{rowId}` (a scored row of the site's log, written for the test) and `{deliveryId}` (a failed
 * delivery of a blocked verification in the site's delivery log, written for the test).
 */
export interface SiteRouteCase {
  method: Extract<HTTPMethods, 'GET' | 'POST' | 'PUT' | 'DELETE'>
  path: string
  /** A body the route accepts, so that 401 and 404 are not masked by a 400. */
  body?: object
  /** What the site's owner gets: proves that the refusals below are about who asks. */
  ownerStatus: number
  /** What the owner's API key gets, where it is not ownerStatus (403 forbidden for a session-only route). */
  keyStatus?: number
}

/** Every route under /api/v1/sites/{id} of the dashboard API proper (webhook routes are listed by their tests). */
export const dashboardSiteRoutes: SiteRouteCase[] = [
  { method: 'GET', path: '/api/v1/sites/{id}', ownerStatus: 200 },
  { method: 'PUT', path: '/api/v1/sites/{id}', body: { settings: { difficulty: 20 } }, ownerStatus: 200 },
  { method: 'DELETE', path: '/api/v1/sites/{id}', ownerStatus: 204 },
  { method: 'POST', path: '/api/v1/sites/{id}/secret/rotate', ownerStatus: 200 },
  { method: 'DELETE', path: '/api/v1/sites/{id}/secret/previous', ownerStatus: 204 },
  { method: 'GET', path: '/api/v1/sites/{id}/stats', ownerStatus: 200 },
  { method: 'GET', path: '/api/v1/sites/{id}/surge', ownerStatus: 200 },
  { method: 'GET', path: '/api/v1/sites/{id}/verifications', ownerStatus: 200 },
  { method: 'GET', path: '/api/v1/sites/{id}/verifications/export', ownerStatus: 200 },
  { method: 'GET', path: '/api/v1/sites/{id}/config', ownerStatus: 200 },
  { method: 'GET', path: '/api/v1/sites/{id}/members', ownerStatus: 200 },
  // The owner's own membership cannot change: 409 proves the route reached the site.
  { method: 'PUT', path: '/api/v1/sites/{id}/members/{ownerId}', body: { role: 'viewer' }, ownerStatus: 409 },
  { method: 'DELETE', path: '/api/v1/sites/{id}/members/{ownerId}', ownerStatus: 409 },
  // Session-only and confirmed by the password: a wrong one (400 validation_error) proves the
  // session's request reached the site; the owner's API key is refused (403 forbidden).
  {
    method: 'POST',
    path: '/api/v1/sites/{id}/transfer',
    body: { accountId: '00000000-0000-4000-8000-000000000000', password: 'not the password' },
    ownerStatus: 400,
    keyStatus: 403,
  },
  { method: 'POST', path: '/api/v1/sites/{id}/invitations', body: { role: 'viewer' }, ownerStatus: 201 },
  { method: 'GET', path: '/api/v1/sites/{id}/invitations', ownerStatus: 200 },
  { method: 'DELETE', path: '/api/v1/sites/{id}/invitations/{invitationId}', ownerStatus: 204 },
  { method: 'PUT', path: '/api/v1/sites/{id}/verifications/{rowId}/label', body: { label: 'legitimate' }, ownerStatus: 200 },
  { method: 'DELETE', path: '/api/v1/sites/{id}/verifications/{rowId}/label', ownerStatus: 204 },
  { method: 'DELETE', path: '/api/v1/sites/{id}/verifications?clientIp=203.0.113.7', ownerStatus: 200 },
]

/** The site routes of the webhook (their behaviour is tested in webhooks*.test.ts). */
export const webhookSiteRoutes: SiteRouteCase[] = [
  { method: 'GET', path: '/api/v1/sites/{id}/webhook-deliveries', ownerStatus: 200 },
  { method: 'POST', path: '/api/v1/sites/{id}/webhook/test', ownerStatus: 409 },
  // The site has no webhook: 409 webhook_not_configured proves the route found its delivery.
  { method: 'POST', path: '/api/v1/sites/{id}/webhook-deliveries/{deliveryId}/redeliver', ownerStatus: 409 },
]

/**
 * The route's URL for the site: {id}, {ownerId}, {invitationId} (an invitation made by the owner's
 * key) and {rowId} (an allowed row of a redeemed challenge, written into the site's log) filled in.
 */
export async function siteRouteUrl(app: App, route: Pick<SiteRouteCase, 'path'>, siteId: string, owner: TestAccount): Promise<string> {
  let url = route.path.replace('{id}', siteId).replace('{ownerId}', owner.id)
  if (url.includes('{invitationId}')) {
    const created = await app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/invitations`, headers: asScript(owner), payload: { role: 'viewer' } })
    url = url.replace('{invitationId}', created.json<{ id: string }>().id)
  }
  if (url.includes('{rowId}')) {
    const [rowId] = await insertVerifications(app.database, [{ siteId, createdAt: new Date(), action: 'allow', riskScore: 10, challengeId: randomUUID() }])
    url = url.replace('{rowId}', rowId!)
  }
  if (url.includes('{deliveryId}')) {
    const deliveryId = randomUUID()
    // An unknown site (the 404 cases) has no log to write to: the id stays unknown.
    const known = (await app.database.query('SELECT 1 FROM sites WHERE id = $1', [siteId])).length > 0
    if (known) await app.webhooks.deliveries.record({
      id: deliveryId, siteId, event: 'verification.blocked', url: 'https://hooks.example/x', isTest: false, verificationId: randomUUID(), redeliveryOf: null,
      outcome: 'failed', statusCode: 500, latencyMs: 3, error: 'the receiver answered HTTP 500', createdAt: new Date(),
    })
    url = url.replace('{deliveryId}', deliveryId)
  }
  return url
}

export interface AuthCaseContext {
  app: App
  owner: TestAccount
  stranger: TestAccount
}

/**
 * The isolation rules every site route must keep (issue 4, item 5), as one test per rule and
 * route: 401 without credentials or with bad ones; 404 for another account's site (by cookie
 * and by API key), an unknown id and a malformed id; 403 csrf_rejected for a cookie-authenticated
 * state-changing request from elsewhere; and after every refusal the site is unchanged. Each
 * test gets a fresh site of the owner, so destructive routes can be listed too; a route's sites
 * are deleted after its tests.
 */
export function describeSiteRouteAuthCases(routes: SiteRouteCase[], getContext: () => AuthCaseContext): void {
  for (const route of routes) {
    describe(`${route.method} ${route.path}`, () => {
      const call = async (siteId: string, headers: Record<string, string>) => {
        const { app, owner } = getContext()
        // A malformed id reaches no site: the route's other ids are the owner's own, unused.
        const url = isUuid(siteId) ? await siteRouteUrl(app, route, siteId, owner) : route.path.replace('{id}', siteId).replace('{ownerId}', owner.id).replace('{invitationId}', randomUUID()).replace('{rowId}', randomUUID()).replace('{deliveryId}', randomUUID())
        return app.inject({
          method: route.method,
          url,
          headers,
          ...(route.body === undefined ? {} : { payload: route.body }),
        })
      }
      // Each route's sites go when its tests end: the routes' tests together would pass an account's 100.
      const madeSites: string[] = []
      const freshSite = async () => {
        const site = await createTestSite(getContext().app, getContext().owner, { name: 'Isolation site' })
        madeSites.push(site.id)
        return site
      }
      afterAll(async () => {
        const { app, owner } = getContext()
        for (const siteId of madeSites.splice(0)) await app.inject({ method: 'DELETE', url: `/api/v1/sites/${siteId}`, headers: asScript(owner) })
      })
      const readSite = async (siteId: string) => {
        const { app, owner } = getContext()
        const response = await app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}`, headers: asScript(owner) })
        return { status: response.statusCode, body: response.body }
      }
      const expectRefusal = async (siteId: string, headers: Record<string, string>, status: number, code: string) => {
        const before = await readSite(siteId)
        const response = await call(siteId, headers)
        expect(response.statusCode, response.body).toBe(status)
        expect(response.json().error.code).toBe(code)
        expect(await readSite(siteId)).toEqual(before)
      }
      const isStateChanging = route.method !== 'GET'

      it('answers 401 unauthorized without credentials', async () => {
        const site = await freshSite()
        await expectRefusal(site.id, {}, 401, 'unauthorized')
      })

      it('answers 401 for an unknown API key, a malformed Authorization header and an unknown session', async () => {
        const site = await freshSite()
        await expectRefusal(site.id, { authorization: `Bearer tgak_${'A'.repeat(43)}` }, 401, 'unauthorized')
        await expectRefusal(site.id, { authorization: 'Basic dXNlcjpwYXNz' }, 401, 'unauthorized')
        await expectRefusal(site.id, { cookie: 'tollgate_session=forged', origin: OWN_ORIGIN }, 401, 'unauthorized')
      })

      // A route no API key may call refuses every key alike (403 forbidden), before any site is
      // looked up: that answer tells nothing of the site either.
      const refusesKeys = route.keyStatus === 403
      it(`answers 404 not_found for another account's site, by cookie and ${refusesKeys ? '403 forbidden' : '404'} by API key`, async () => {
        const site = await freshSite()
        const { stranger } = getContext()
        await expectRefusal(site.id, asBrowser(stranger), 404, 'not_found')
        await expectRefusal(site.id, asScript(stranger), refusesKeys ? 403 : 404, refusesKeys ? 'forbidden' : 'not_found')
      })

      it('answers 404 not_found for an unknown and for a malformed site id', async () => {
        const { owner } = getContext()
        for (const siteId of [randomUUID(), 'not-a-uuid', "1' OR '1'='1"]) {
          const response = await call(encodeURIComponent(siteId), refusesKeys ? asBrowser(owner) : asScript(owner))
          expect(response.statusCode, response.body).toBe(404)
          expect(response.json().error.code).toBe('not_found')
        }
      })

      if (isStateChanging) {
        it('answers 403 csrf_rejected to a session cookie without our Origin or Referer', async () => {
          const site = await freshSite()
          const { owner } = getContext()
          await expectRefusal(site.id, { cookie: owner.cookie }, 403, 'csrf_rejected')
          await expectRefusal(site.id, { cookie: owner.cookie, origin: 'https://evil.example' }, 403, 'csrf_rejected')
          await expectRefusal(site.id, { cookie: owner.cookie, origin: 'null' }, 403, 'csrf_rejected')
          await expectRefusal(site.id, { cookie: owner.cookie, referer: 'https://evil.example/page' }, 403, 'csrf_rejected')
        })
      }

      it(`answers ${route.ownerStatus} to the owner, by cookie and ${route.keyStatus ?? route.ownerStatus} by API key`, async () => {
        const { owner } = getContext()
        const bySession = await call((await freshSite()).id, isStateChanging ? { cookie: owner.cookie, referer: `${OWN_ORIGIN}/dashboard` } : { cookie: owner.cookie })
        expect(bySession.statusCode, bySession.body).toBe(route.ownerStatus)
        const byKey = await call((await freshSite()).id, asScript(owner))
        expect(byKey.statusCode, byKey.body).toBe(route.keyStatus ?? route.ownerStatus)
      })
    })
  }
}

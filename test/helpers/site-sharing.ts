import { afterAll, beforeAll, expect } from 'vitest'
import type { App } from '../../src/app.js'
import { asBrowser, createTestAccount, type TestAccount } from './dashboard-client.js'
import { buildTestApp, type deployments, type TestApp, type TestAppOptions } from './test-app.js'

export interface CreatedInvitation {
  id: string
  role: 'admin' | 'viewer'
  email: string | null
  token: string
  url: string
}

/** Invites through the HTTP API, as `inviter`'s browser. */
export async function inviteTo(app: App, inviter: TestAccount, siteId: string, body: { role: 'admin' | 'viewer'; email?: string }): Promise<CreatedInvitation> {
  const response = await app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/invitations`, headers: asBrowser(inviter), payload: body })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<CreatedInvitation>()
}

/** Accepts the invitation's token as `invitee`'s browser; the answer, unchecked. */
export function acceptInvitation(app: App, invitee: TestAccount, token: string) {
  return app.inject({ method: 'POST', url: '/api/v1/invitations/accept', headers: asBrowser(invitee), payload: { token } })
}

/** Makes `member` a member of the owner's site with `role`, through an invitation. */
export async function shareSite(app: App, owner: TestAccount, member: TestAccount, siteId: string, role: 'admin' | 'viewer'): Promise<void> {
  const invitation = await inviteTo(app, owner, siteId, { role })
  const accepted = await acceptInvitation(app, member, invitation.token)
  expect(accepted.statusCode, accepted.body).toBe(201)
}

/**
 * Makes `count` accounts viewers of the site, written straight in: as many sign-ups would spend
 * the time on password hashing. For the tests of the member limit.
 */
export async function addFillerMembers(app: App, siteId: string, count: number): Promise<void> {
  await app.database.query(
    `WITH made AS (
       INSERT INTO accounts (id, email, password_hash)
       SELECT gen_random_uuid(), 'filler-' || n || '-' || $2 || '@example.com', 'x' FROM generate_series(1, $3::int) n RETURNING id
     )
     INSERT INTO site_members (site_id, account_id, role) SELECT $1, id, 'viewer' FROM made`,
    [siteId, siteId.slice(0, 8), count],
  )
}

/**
 * The suite's app on one of the deployments (with `config` over its own), built before its tests
 * with an account to own the sites they share, and closed after them; nothing is built when the
 * deployment's services are away (the suite's tests are skipped then).
 */
export function useAppWithOwner(
  { available, options }: (typeof deployments)[number],
  config?: TestAppOptions['config'],
): { readonly service: TestApp; readonly owner: TestAccount } {
  const suite = {} as { service: TestApp; owner: TestAccount }
  beforeAll(async () => {
    if (!available) return
    suite.service = await buildTestApp({ ...options, config: { ...options.config, ...config } })
    suite.owner = await createTestAccount(suite.service.app)
  })
  afterAll(async () => {
    if (available) await suite.service.close()
  })
  return suite
}

import type { LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import type { App } from '../../src/app.js'
import { asBrowser, randomClientAddress, type TestAccount } from './dashboard-client.js'

/** The fields of an audit event as the listing answers it. */
export interface AuditEvent {
  id: string
  createdAt: string
  action: string
  actor: { type: string; id: string | null; name: string | null; keyPrefix: string | null; clientIp: string | null; userAgent: string | null; accountId: string | null; email: string | null }
  site: { id: string; name: string } | null
  details: Record<string, unknown>
}

/** Every item a log's listing answers at `url` (which has a query already), page after page by its cursor. */
export async function listAllPages<Item>(app: App, url: string, headers: Record<string, string>): Promise<Item[]> {
  const items: Item[] = []
  let cursor: string | null = null
  do {
    const response: LightMyRequestResponse = await app.inject({ method: 'GET', url: `${url}&limit=200${cursor === null ? '' : `&cursor=${cursor}`}`, headers })
    expect(response.statusCode, response.body).toBe(200)
    const page = response.json<{ items: Item[]; nextCursor: string | null }>()
    items.push(...page.items)
    cursor = page.nextCursor
  } while (cursor !== null)
  return items
}

/** The objects of an NDJSON body, one a line. */
export function ndjsonLines<Item>(body: string): Item[] {
  return body.trimEnd().split('\n').map((line) => JSON.parse(line) as Item)
}

/** A 400 validation_error that names the field. */
export function expectValidationError(response: LightMyRequestResponse, field: string): void {
  expect(response.statusCode, response.body).toBe(400)
  expect(response.json().error.code).toBe('validation_error')
  expect(response.json().error.details).toContainEqual(expect.objectContaining({ field }))
}

/** A read-only API key of the account, made as the dashboard makes one. */
export async function createReadOnlyKey(app: App, account: TestAccount): Promise<string> {
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: asBrowser(account),
    payload: { name: 'exporter', access: 'read', password: account.password },
    remoteAddress: randomClientAddress(),
  })
  expect(created.statusCode, created.body).toBe(201)
  return created.json<{ key: string }>().key
}

/** Runs `work`, and the UTC days (YYYY-MM-DD) it ran on: one, or two across midnight. A file named by the day is named by one of them. */
export async function withDaysAround<T>(work: () => Promise<T>): Promise<{ result: T; days: string[] }> {
  const dayOf = () => new Date().toISOString().slice(0, 10)
  const before = dayOf()
  const result = await work()
  return { result, days: [...new Set([before, dayOf()])] }
}

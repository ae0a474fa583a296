import type { AuditAction } from '../../../src/domain/audit/audit-actions.js'
import { request } from './client.js'
import { readList } from './read-list.js'
import type { AuditLogPage } from './types.js'

/** The account's audit log, newest first; pass a page's nextCursor as cursor for the next one. */
export function fetchAuditLog(query: { limit: number; cursor?: string; siteId?: string; action?: AuditAction }): Promise<AuditLogPage> {
  return request<AuditLogPage>('/audit-log', { query })
}

/** A site the account's log has events of, as its newest event names it (deleted: that event is its deletion). */
export interface LoggedSite {
  id: string
  name: string
  deleted: boolean
}

/** The sites the account's log has events of: those transferred away, no longer shared or deleted included. */
export async function listLoggedSites(): Promise<LoggedSite[]> {
  return readList<LoggedSite>(await request<unknown>('/audit-log/sites'))
}

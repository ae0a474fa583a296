import type { AuditAction } from '../../../src/domain/audit/audit-actions.js'
import { request } from './client.js'
import type { AuditLogPage } from './types.js'

/** The account's audit log, newest first; pass a page's nextCursor as cursor for the next one. */
export function fetchAuditLog(query: { limit: number; cursor?: string; siteId?: string; action?: AuditAction }): Promise<AuditLogPage> {
  return request<AuditLogPage>('/audit-log', { query })
}

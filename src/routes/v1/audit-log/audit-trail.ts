import type { FastifyRequest } from 'fastify'
import type { AuditActor, NewAuditEvent } from '../../../domain/audit/audit-event.js'
import { accountOf } from '../../../plugins/authentication.js'
import type { SqlExecutor } from '../../../storage/ports.js'
import { createAuditLogRepository } from '../../../storage/sql/audit-log-repository.js'

/** Who made the request, as the audit log records it: its credential, address and browser. */
export function auditActorOf(request: FastifyRequest): AuditActor {
  const origin = { clientIp: request.ip, userAgent: request.headers['user-agent'] ?? null }
  const authentication = request.authentication
  if (authentication?.method === 'api-key') {
    return { type: 'api-key', id: authentication.apiKeyId, name: authentication.name, keyPrefix: authentication.prefix, ...origin }
  }
  if (authentication?.method === 'session') {
    return { type: 'session', id: authentication.sessionId, name: request.account?.email ?? null, keyPrefix: null, ...origin }
  }
  return { type: 'anonymous', id: null, name: null, keyPrefix: null, ...origin }
}

/**
 * Records what the authenticated request did, through `executor`: the transaction of the change
 * itself, so that the event and the change commit together or not at all.
 */
export function recordAudit(executor: SqlExecutor, request: FastifyRequest, event: Omit<NewAuditEvent, 'accountId' | 'actor'> & Partial<NewAuditEvent>) {
  return createAuditLogRepository(executor).record({
    ...event,
    accountId: event.accountId ?? accountOf(request).id,
    actor: event.actor ?? auditActorOf(request),
  })
}

import type { FastifyInstance } from 'fastify'
import { tagClient } from '../../domain/challenge/client-tag.js'
import type { NewVerificationLabel } from '../../domain/feedback/verification-label.js'
import { recordFraudulentLabel } from '../../domain/history/client-history.js'
import { addressGroupOf } from '../../domain/history/client-keys.js'
import type { LabelTarget } from '../../storage/sql/verification-label-repository.js'

/**
 * What follows a stored label, whoever set it: the feedback counter moves, and a fraudulent label
 * counts against the verification's client (its address group, keyed as the public gate keys it:
 * tagClient under the challenge key) so that its next challenge is harder. The row's own address
 * is all it takes; nothing new is stored for it. A row without an address (none was known) only
 * counts.
 */
export async function followLabel(app: FastifyInstance, siteId: string, target: LabelTarget, label: NewVerificationLabel): Promise<void> {
  app.counters.increment('feedback', { label: label.label, source: label.source })
  if (label.label !== 'fraudulent' || target.clientIp === null) return
  const client = tagClient(app.keyRing.macKeyFor('challenge'), addressGroupOf(target.clientIp))
  await recordFraudulentLabel(app.keyValue, { siteId, client })
}

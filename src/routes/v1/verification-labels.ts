import type { FastifyInstance } from 'fastify'
import type { NewVerificationLabel, VerificationLabel } from '../../domain/feedback/verification-label.js'
import { recordFraudulentLabel } from '../../domain/history/client-history.js'
import { isNetworkAddress } from '../../domain/network/address-forms.js'
import type { LabelTarget } from '../../storage/sql/verification-label-repository.js'

/**
 * What follows a stored label, whoever set it, when it changed the row's label (`previous`, what
 * setLabel answered; undefined when the caller does not know it, taken as a change): the feedback
 * counter moves, and a label changed to fraudulent counts against the verification's client (its
 * address group, keyed as the public gate keys it: tagClient under the challenge key) so that its
 * next challenge is harder, when the verification is recent (recordFraudulentLabel: the address
 * may have changed hands since an older one). A repeat of the row's label (a backend's retry) does neither, so it
 * counts once. The row's own address is all it takes; nothing new is stored for it. A row without
 * an address (none was known) only counts.
 *
 * It runs after the label is committed, so it never fails the call: a history store that fails
 * (Redis away) is logged, the label stays saved, and the client's next challenges are not made
 * harder for it.
 */
export async function followLabel(
  app: FastifyInstance,
  siteId: string,
  target: LabelTarget,
  label: NewVerificationLabel,
  previous?: VerificationLabel | null,
): Promise<void> {
  if (previous === label.label) return
  app.counters.increment('feedback', { label: label.label, source: label.source })
  // A truncated address names a network, not the client: its history is not the client's to raise.
  // Judged by the row, not LOG_CLIENT_IP: a row keeps the form it was logged in when the mode changes.
  if (label.label !== 'fraudulent' || target.clientIp === null || isNetworkAddress(target.clientIp)) return
  try {
    const client = app.clientTags.ofGroup(target.clientIp)
    await recordFraudulentLabel(app.keyValue, { siteId, client, verifiedAt: target.createdAt })
  } catch (error) {
    app.log.error({ err: error, siteId, verificationId: target.verificationId }, "could not count a fraudulent label in its client's history; the label is saved")
  }
}

import { randomBytes } from 'node:crypto'
import type { KeyValueStore } from '../../storage/ports.js'
import type { ChallengeRecord } from '../challenge/challenge-record.js'
import { decodePendingStepUps, encodePendingStepUps, stepUpsKey, type ClientRef } from '../history/client-history.js'
import type { RiskAction } from './decide-action.js'

/** How long a client's pending step-up is remembered; the SDK comes back within seconds. */
export const STEP_UP_MEMORY_MS = 10 * 60_000

/**
 * Moves the client's step-up state on after a scored verification: a challenge opens one more
 * round (the next challenge is harder), with an id of its own (unless it earned no credit while a
 * round is pending: see below). Allow or block ends the sequence:
 * the round the verification was credited for was taken by claimStepUps already, and a round
 * opened meanwhile by another verification is left alone. `solvedStepUps` is what this
 * verification was credited with, so the new count never depends on what else ran concurrently.
 *
 * The state is kept per client of the history (an IPv4 address or an IPv6 /64) and browser (its
 * User-Agent), beside the address's request count, so that a challenge request reads both in one
 * step (recordChallengeRequest), so that rotating through the addresses of one /64 does not shed a
 * pending step-up, and so that people behind one address (NAT) do not take each other's rounds. A
 * client that changes its User-Agent starts a sequence afresh: it loses the credit of the rounds
 * it solved, and never reaches the end of the sequence that way.
 */
export async function advanceStepUps(
  store: KeyValueStore,
  client: ClientRef,
  action: RiskAction,
  solvedStepUps: number,
): Promise<void> {
  if (action !== 'challenge') return
  const round = randomBytes(5).toString('hex')
  const state = encodePendingStepUps({ count: solvedStepUps + 1, round })
  // A verification credited with no round (the first of a sequence, a challenge left over from an
  // earlier round, or the loser of a race for one) opens a round only if none is pending: the
  // round pending now belongs to the client's newer challenges, and resetting it would take away
  // the credit they are about to earn.
  if (solvedStepUps === 0) await store.setIfAbsent(stepUpsKey(client), state, STEP_UP_MEMORY_MS)
  else await store.set(stepUpsKey(client), state, STEP_UP_MEMORY_MS)
}

/**
 * The step-ups a verification is credited with: those its challenge record carries, if the
 * client's pending step-up round is still the one the challenge was issued in. The pending state
 * is taken (atomically, on Redis too), so that of several challenges fetched during one round only
 * the first one solved earns the credit; the others are judged as first rounds (and a challenge
 * verdict for one of them opens a new round, which the rest were not issued in). A challenge of an
 * earlier round takes nothing: the round pending now stays for the challenges issued in it.
 */
export async function claimStepUps(store: KeyValueStore, client: ClientRef, record: Pick<ChallengeRecord, 'stepUps' | 'stepUpRound'>): Promise<number> {
  if (record.stepUps === 0 || record.stepUpRound === undefined) return 0
  // Only the round the challenge was issued in is taken: a challenge left over from an earlier
  // round must not consume the round pending now, which the client's newer challenges carry.
  const pending = decodePendingStepUps(await store.takeIfEndsWith(stepUpsKey(client), `.${record.stepUpRound}`))
  return pending.round === record.stepUpRound ? record.stepUps : 0
}

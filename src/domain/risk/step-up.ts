import type { KeyValueStore } from '../../storage/ports.js'
import { clientKey, STEP_UPS_KEY_PART, type ClientRef } from '../history/client-history.js'
import type { RiskAction } from './decide-action.js'

/** How long a client's pending step-up is remembered; the SDK comes back within seconds. */
export const STEP_UP_MEMORY_MS = 10 * 60_000

/**
 * Moves the client's step-up state on after a scored verification: a challenge asks for one more
 * round (the next challenge is harder); allow or block ends the sequence. `solvedStepUps` comes
 * from the challenge record, so the new count never depends on what else ran concurrently.
 *
 * The state is kept per client of the history (an IPv4 address or an IPv6 /64), beside its
 * request count, so that a challenge request reads both in one step (recordChallengeRequest), and
 * so that rotating through the addresses of one /64 does not shed a pending step-up.
 */
export async function advanceStepUps(
  store: KeyValueStore,
  client: ClientRef,
  action: RiskAction,
  solvedStepUps: number,
): Promise<void> {
  const key = clientKey(client, STEP_UPS_KEY_PART)
  if (action === 'challenge') await store.set(key, String(solvedStepUps + 1), STEP_UP_MEMORY_MS)
  else if (solvedStepUps > 0) await store.delete(key)
}

import type { KeyValueStore } from '../../storage/ports.js'
import { stepUpKey } from '../challenge/challenge-keys.js'
import type { RiskAction } from './decide-action.js'

/** How long a client's pending step-up is remembered; the SDK comes back within seconds. */
export const STEP_UP_MEMORY_MS = 10 * 60_000

export interface StepUpClient {
  siteId: string
  clientTag: string
}

/** Step-ups this client has been asked for on this site and not yet resolved. */
export async function readStepUps(store: KeyValueStore, client: StepUpClient): Promise<number> {
  const stored = await store.get(stepUpKey(client.siteId, client.clientTag))
  const stepUps = stored === null ? 0 : Number(stored)
  return Number.isSafeInteger(stepUps) && stepUps > 0 ? stepUps : 0
}

/**
 * Moves the client's step-up state on after a scored verification: a challenge asks for one more
 * round (the next challenge is harder); allow or block ends the sequence. `solvedStepUps` comes
 * from the challenge record, so the new count never depends on what else ran concurrently.
 */
export async function advanceStepUps(
  store: KeyValueStore,
  client: StepUpClient,
  action: RiskAction,
  solvedStepUps: number,
): Promise<void> {
  const key = stepUpKey(client.siteId, client.clientTag)
  if (action === 'challenge') await store.set(key, String(solvedStepUps + 1), STEP_UP_MEMORY_MS)
  else if (solvedStepUps > 0) await store.delete(key)
}

import { answersWithin, NoAnswerInTime } from './answers-within.js'
import { DependencyRefusal } from './dependency-refusal.js'

/** How long /ready (and the scrape's tollgate_dependency_up) waits for a store's answer. */
export const DEPENDENCY_CHECK_TIMEOUT_MS = 1_000

export interface DependencyCheck {
  status: 'up' | 'down'
  kind: string
  latencyMs: number
  error?: string
}

/** Pings a store as /ready does: up when it answers (and takes writes) within the time. */
export async function checkDependency(kind: string, ping: () => Promise<void>): Promise<DependencyCheck> {
  const started = performance.now()
  try {
    await answersWithin(ping(), DEPENDENCY_CHECK_TIMEOUT_MS)
    return { status: 'up', kind, latencyMs: Math.round(performance.now() - started) }
  } catch (error) {
    // The reason is generic on purpose: connection strings and hosts stay out of the answer. What
    // the store itself said (full, read-only, a refused password, a refused database number) is
    // the operator's to mend and names neither.
    const reason = error instanceof DependencyRefusal || error instanceof NoAnswerInTime ? error.message : 'not reachable'
    return { status: 'down', kind, latencyMs: Math.round(performance.now() - started), error: reason }
  }
}

import type { AnomalyLabel } from './anomalies.js'
import type { ScoringInput } from './scoring-input.js'

/** behaviorData keys counted as interaction. */
const interactionKeys = ['mouseMovements', 'keystrokes', 'touches', 'scrolls'] as const

/**
 * Behaviour keys read: mouseMovements, keystrokes, touches, scrolls (non-negative counts). Zero
 * interaction is weak evidence on its own: an invisible challenge may be solved before the
 * visitor has touched anything.
 */
export function detectBehaviorAnomalies(input: ScoringInput): AnomalyLabel[] {
  const { behaviorData } = input.submission
  const hasInteraction = interactionKeys.some((key) => {
    const count = behaviorData[key]
    return typeof count === 'number' && count > 0
  })
  return hasInteraction ? [] : ['no_interaction']
}

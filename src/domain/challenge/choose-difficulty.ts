/** Leading zero bits added per step-up round: each round costs the client four times the work. */
export const STEP_UP_DIFFICULTY_BITS = 2

/** A ceiling no browser should be asked to pay (2^32 hashes is minutes of work). */
export const MAX_DIFFICULTY = 32

export interface DifficultyInput {
  /** The site's base difficulty (settings.difficulty). */
  baseDifficulty: number
  /** Step-up rounds this client has been asked for on this site. */
  stepUps: number
  /** Adaptive bits for the client's network and history (sumExtraDifficulty, already capped). */
  extraBits?: number
}

/**
 * The difficulty of the next challenge for one client. Adaptive difficulty only ever raises the
 * site's base: by step-up rounds, and by what the client's address and history look like.
 */
export function chooseDifficulty(input: DifficultyInput): number {
  const raised = input.baseDifficulty + STEP_UP_DIFFICULTY_BITS * input.stepUps + Math.max(0, input.extraBits ?? 0)
  return Math.min(MAX_DIFFICULTY, Math.max(1, raised))
}

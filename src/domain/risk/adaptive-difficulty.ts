import type { AnomalyLabel } from './anomalies.js'

/**
 * Adaptive difficulty (DESIGN section 4): labels that describe the client rather than one
 * submission (where it connects from, what it did recently) also raise the difficulty of its
 * next challenges, in leading zero bits; each bit doubles the expected work. Labels absent here
 * add nothing: they are known only once a solution arrives.
 */
export const extraDifficultyBits: Partial<Record<AnomalyLabel, number>> = {
  datacenter_ip: 2,
  vpn_detected: 1,
  tor_exit: 2,
  high_request_rate: 2,
  recent_blocks: 2,
  fingerprint_many_ips: 1,
}

/** Adaptive difficulty never adds more than this (16 times the work). */
export const MAX_EXTRA_DIFFICULTY = 4

/** The bits the labels add to the next challenge, capped at MAX_EXTRA_DIFFICULTY. */
export function sumExtraDifficulty(labels: Iterable<AnomalyLabel>): number {
  let bits = 0
  for (const label of new Set(labels)) bits += extraDifficultyBits[label] ?? 0
  return Math.min(MAX_EXTRA_DIFFICULTY, bits)
}

/**
 * One solver back end: the SIMD WebAssembly module or the plain JavaScript fallback. Both scan
 * the same nonces in the same order, so they find the same answers.
 */
export interface SearchEngine {
  readonly kind: 'wasm-simd' | 'js'
  /** Loads a job: the challenge midstate and the four lane prefixes' words. */
  load(midstate: ArrayLike<number>, lanePrefixWords: readonly (readonly number[])[]): void
  /**
   * Scans suffixes from `start` (inclusive) to `end` (exclusive) over all four lanes and
   * returns the first suffix where some lane's first hash word is below `threshold`
   * (unsigned), or -1.
   */
  search(start: number, end: number, threshold: number): number
}

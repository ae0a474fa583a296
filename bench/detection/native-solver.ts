import { createHash } from 'node:crypto'

/**
 * What a script author writes first: try nonces 0, 1, 2, ... with the platform's native SHA-256
 * (OpenSSL under node:crypto) until the hash has `difficulty` leading zero bits.
 */
export function solveNatively(challenge: string, difficulty: number): { nonce: string; elapsedMs: number } {
  const started = performance.now()
  const fullBytes = Math.floor(difficulty / 8)
  const remainingBits = difficulty % 8
  for (let nonce = 0; ; nonce++) {
    const digest = createHash('sha256').update(challenge + String(nonce)).digest()
    let isSolved = true
    for (let i = 0; i < fullBytes && isSolved; i++) isSolved = digest[i] === 0
    if (isSolved && remainingBits > 0) isSolved = ((digest[fullBytes] ?? 0) >> (8 - remainingBits)) === 0
    if (isSolved) return { nonce: String(nonce), elapsedMs: Math.round(performance.now() - started) }
  }
}

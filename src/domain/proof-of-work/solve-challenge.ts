import { countLeadingZeroBits } from './count-leading-zero-bits.js'
import { hashSolution, type ProofOfWork } from './verify-solution.js'

/**
 * The reference solver: tries nonces 0, 1, 2, ... and returns the first that solves the proof
 * of work. For tests, the benchmark and scripted clients; browsers use the SDK's fast solver.
 */
export function solveChallenge(proofOfWork: ProofOfWork, firstNonce = 0): string {
  for (let nonce = firstNonce; nonce < Number.MAX_SAFE_INTEGER; nonce++) {
    const text = String(nonce)
    if (countLeadingZeroBits(hashSolution(proofOfWork.challenge, text)) >= proofOfWork.difficulty) return text
  }
  throw new Error('no nonce below 2^53 solves this proof of work')
}

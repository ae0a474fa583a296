import { hash } from 'node:crypto'
import { countLeadingZeroBits } from './count-leading-zero-bits.js'
import { isNonceText } from './nonce.js'

export interface ProofOfWork {
  /** 64 lowercase hex characters: exactly one SHA-256 block. */
  challenge: string
  difficulty: number
}

/** SHA-256 of the UTF-8 bytes of challenge + nonce: the hash a solution is judged by. */
export function hashSolution(challenge: string, nonce: string): Buffer {
  return hash('sha256', challenge + nonce, 'buffer')
}

/**
 * Whether `nonce` solves the proof of work: it has the protocol's format and
 * SHA-256(challenge + nonce) begins with at least `difficulty` zero bits. Nothing here is
 * secret (the challenge is public once issued), so no constant-time care is needed.
 */
export function verifySolution(proofOfWork: ProofOfWork, nonce: string): boolean {
  if (!isNonceText(nonce)) return false
  return countLeadingZeroBits(hashSolution(proofOfWork.challenge, nonce)) >= proofOfWork.difficulty
}

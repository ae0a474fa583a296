import type { FastifyRequest } from 'fastify'
import type { VerificationLogEntry } from '../../../plugins/verification-log.js'

/**
 * What the handler learnt about a submission before refusing it, for its log row; `logged` once
 * its verdict has a row (whose id is the request's), so that an error after that adds none.
 */
export type KnownFacts = Partial<Pick<VerificationLogEntry, 'challengeId' | 'difficulty' | 'solveTimeMs' | 'stepUps'>> & { logged?: true }

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the verify route (decorated in its scope only). */
    submissionFacts: KnownFacts | null
  }
}

export function noteFacts(request: FastifyRequest, facts: KnownFacts): void {
  if (request.submissionFacts === null) request.submissionFacts = facts
  else Object.assign(request.submissionFacts, facts)
}

export function factsOf(request: FastifyRequest): KnownFacts {
  return request.submissionFacts ?? {}
}

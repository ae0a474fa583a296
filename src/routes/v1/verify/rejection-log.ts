import type { FastifyError, FastifyRequest } from 'fastify'
import { ApiError, type ErrorCode } from '../../../errors.js'
import type { VerificationLogEntry } from '../../../plugins/verification-log.js'

/** What the handler learnt about a submission before refusing it, for its log row. */
export type KnownFacts = Partial<Pick<VerificationLogEntry, 'challengeId' | 'difficulty' | 'solveTimeMs' | 'stepUps'>>

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

/** The catalogue code the error handler answers with, for metrics and the log. */
export function rejectionCodeOf(error: FastifyError | Error): ErrorCode {
  if (error instanceof ApiError) return error.code
  const status = (error as FastifyError).statusCode ?? 500
  if (status === 413) return 'payload_too_large'
  if (status === 415) return 'unsupported_media_type'
  if (status >= 400 && status < 500) return 'validation_error'
  return 'internal_error'
}

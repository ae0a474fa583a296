import type { AnomalyLabel } from './anomalies.js'

/** Values of fingerprint and behaviorData: JSON primitives or short arrays of them (see the verify schema). */
export type SignalValue = string | number | boolean | null | (string | number | boolean | null)[]
export type Signals = Readonly<Record<string, SignalValue | undefined>>

/** What the offline IP data says about the client's address (src/domain/network). */
export interface NetworkFacts {
  countryCode?: string
  isDatacenter?: boolean
  isVpn?: boolean
  isTorExit?: boolean
}

/**
 * Everything a verification is scored on. Signal groups read what they need; a new group adds
 * its facts here (optional, so that callers without them still compile) and its labels to the
 * vocabulary.
 */
export interface ScoringInput {
  submission: {
    solveTimeMs: number
    fingerprint: Signals
    behaviorData: Signals
  }
  request: {
    /** Request headers, lowercase names as Node gives them. */
    headers: Readonly<Record<string, string | string[] | undefined>>
    /**
     * Whether Origin or Referer named the calling page's host: `null` (sandboxed frames, file:
     * pages), an unparseable value or a host longer than a DNS name names none.
     */
    hasOrigin: boolean
    /** Whether the request reached the service over https or a loopback host (where browsers send client hints). */
    isTrustworthyDestination?: boolean
    /** Whether the calling page (Origin or Referer) is a secure context (where navigator.userAgentData exists). */
    isSecurePage?: boolean
  }
  proofOfWork: {
    difficulty: number
    /** Milliseconds between issuing the challenge and receiving the submission, by the server's clock. */
    observedSolveMs: number
    /** Whether the submission came from the address the challenge was issued to. */
    isSameClient: boolean
    /** The submitted nonce: its layout tells which solver found it and how much work it proves. */
    nonce?: string
  }
  network?: NetworkFacts
  /** Labels from the client's recent history on this site (src/domain/history, read from Redis by the caller). */
  history?: { anomalies: readonly AnomalyLabel[] }
  /** Step-ups the client has solved on this site before this submission (from the challenge record). */
  stepUps: number
  /**
   * The score from which solved step-ups earn nothing: the site's block threshold. Work offsets
   * the doubt of the challenge band, not evidence that blocks on its own (a client that starts a
   * sequence with mild signals and then shows automation is not let through by the rounds it paid).
   */
  stepUpCreditBelow?: number
}

import { isStepUpRound } from '../history/client-history.js'
import { compactRecurringUuid, expandUuid } from './compact-uuid.js'

/**
 * What the server keeps about an outstanding challenge, and nothing more: the challenge string is
 * recomputed from it, so it is never stored. Serialized it is about 50 bytes, which keeps a
 * challenge under 256 bytes of Redis memory including the key and its expiry (bench/README.md).
 */
export interface ChallengeRecord {
  siteId: string
  difficulty: number
  /** Epoch milliseconds. */
  issuedAt: number
  /** Epoch milliseconds. */
  expiresAt: number
  /** Step-ups this client had taken on this site when the challenge was issued (0 normally). */
  stepUps: number
  /** The step-up round the challenge was issued in, with stepUps > 0 (see claimStepUps). */
  stepUpRound?: string
  /** tagClient() of the address the challenge was issued to. */
  clientTag: string
}

const FORMAT_VERSION = '1'

/** `1|site|difficulty|expiresAt(base36)|lifetimeMs(base36)|stepUps[.round]|clientTag` */
export function encodeChallengeRecord(record: ChallengeRecord): string {
  return [
    FORMAT_VERSION,
    compactRecurringUuid(record.siteId),
    String(record.difficulty),
    record.expiresAt.toString(36),
    (record.expiresAt - record.issuedAt).toString(36),
    record.stepUpRound === undefined ? String(record.stepUps) : `${record.stepUps}.${record.stepUpRound}`,
    record.clientTag,
  ].join('|')
}

/** The record, or undefined when the text is not one this version wrote. */
export function decodeChallengeRecord(text: string): ChallengeRecord | undefined {
  const [version, site, difficulty, expiresAt, lifetime, stepUpsField, clientTag, ...rest] = text.split('|')
  if (version !== FORMAT_VERSION || rest.length > 0 || clientTag === undefined) return undefined
  const [stepUps, stepUpRound, ...extra] = (stepUpsField ?? '').split('.')
  if (extra.length > 0 || (stepUpRound !== undefined && !isStepUpRound(stepUpRound))) return undefined
  const siteId = expandUuid(site ?? '')
  const numbers = [Number(difficulty), parseInt(expiresAt ?? '', 36), parseInt(lifetime ?? '', 36), Number(stepUps)]
  if (siteId === undefined || !numbers.every((value) => Number.isSafeInteger(value) && value >= 0)) return undefined
  const [difficultyValue, expiresAtValue, lifetimeValue, stepUpsValue] = numbers as [number, number, number, number]
  return {
    siteId,
    difficulty: difficultyValue,
    issuedAt: expiresAtValue - lifetimeValue,
    expiresAt: expiresAtValue,
    stepUps: stepUpsValue,
    ...(stepUpRound === undefined ? {} : { stepUpRound }),
    clientTag,
  }
}

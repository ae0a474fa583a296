import { describe, expect, it } from 'vitest'
import { decodeChallengeRecord, encodeChallengeRecord, type ChallengeRecord } from '../../../src/domain/challenge/challenge-record.js'
import { compactUuid, expandUuid } from '../../../src/domain/challenge/compact-uuid.js'

const record: ChallengeRecord = {
  siteId: '9b2d8c1e-5f3a-4c6d-8e7f-0a1b2c3d4e5f',
  difficulty: 20,
  issuedAt: 1_767_225_480_000,
  expiresAt: 1_767_225_600_000,
  stepUps: 2,
  clientTag: 'AbCdEf12',
}

describe('challenge records', () => {
  it('round-trips every field', () => {
    expect(decodeChallengeRecord(encodeChallengeRecord(record))).toEqual(record)
  })

  it('round-trips the step-up round a step-up challenge was issued in, and reads records without one', () => {
    const inRound = { ...record, stepUpRound: '0f3a9c21be' }
    expect(encodeChallengeRecord(inRound)).toContain('|2.0f3a9c21be|')
    expect(decodeChallengeRecord(encodeChallengeRecord(inRound))).toEqual(inRound)
    expect(decodeChallengeRecord(encodeChallengeRecord(record))).not.toHaveProperty('stepUpRound')
  })

  it('stays small: about 50 bytes for the Redis memory budget', () => {
    expect(encodeChallengeRecord(record).length).toBeLessThanOrEqual(56)
  })

  it.each(['', 'garbage', '2|x|1|1|1|0|t', `${encodeChallengeRecord(record)}|extra`, '1|not-a-uuid|20|abc|1|0|tag', '1|m5suHl86TG2Ofwobsj1OXw|-1|abc|1|0|tag', '1|m5suHl86TG2Ofwobsj1OXw|20|abc|1|1.BAD!|tag', '1|m5suHl86TG2Ofwobsj1OXw|20|abc|1|1.ab.cd|tag'])(
    'decodes %j to nothing',
    (text) => {
      expect(decodeChallengeRecord(text)).toBeUndefined()
    },
  )
})

describe('compact UUIDs', () => {
  it('use 22 characters and expand back to the canonical form', () => {
    const compact = compactUuid(record.siteId)
    expect(compact).toHaveLength(22)
    expect(expandUuid(compact)).toBe(record.siteId)
    expect(expandUuid(compactUuid(record.siteId.toUpperCase()))).toBe(record.siteId)
  })

  it('refuse text that is not a compacted UUID', () => {
    expect(expandUuid('short')).toBeUndefined()
    expect(expandUuid('A'.repeat(21) + 'B')).toBeUndefined()
  })
})

import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { chooseDifficulty } from '../../../src/domain/challenge/choose-difficulty.js'
import { extraDifficultyBits, MAX_EXTRA_DIFFICULTY, sumExtraDifficulty } from '../../../src/domain/risk/adaptive-difficulty.js'
import { anomalyLabels, anomalyVocabulary } from '../../../src/domain/risk/anomalies.js'

describe('adaptive difficulty', () => {
  it('adds the bits of the client labels, each label once, capped', () => {
    expect(sumExtraDifficulty([])).toBe(0)
    expect(sumExtraDifficulty(['datacenter_ip'])).toBe(2)
    expect(sumExtraDifficulty(['datacenter_ip', 'datacenter_ip'])).toBe(2)
    expect(sumExtraDifficulty(['vpn_detected', 'fingerprint_many_ips'])).toBe(2)
    expect(sumExtraDifficulty(['datacenter_ip', 'high_request_rate', 'recent_blocks'])).toBe(MAX_EXTRA_DIFFICULTY)
    // Labels of one submission say nothing about the next challenge.
    expect(sumExtraDifficulty(['webdriver_detected', 'no_interaction'])).toBe(0)
  })

  it('raises the site base difficulty on top of step-ups, within the ceiling', () => {
    expect(chooseDifficulty({ baseDifficulty: 18, stepUps: 0, extraBits: 2 })).toBe(20)
    expect(chooseDifficulty({ baseDifficulty: 18, stepUps: 1, extraBits: 4 })).toBe(24)
    expect(chooseDifficulty({ baseDifficulty: 30, stepUps: 2, extraBits: 4 })).toBe(32)
    expect(chooseDifficulty({ baseDifficulty: 18, stepUps: 0 })).toBe(18)
  })

  it('is documented in docs/risk.md with each label\'s weight and bits', async () => {
    const documentation = await readFile(new URL('../../../docs/risk.md', import.meta.url), 'utf8')
    for (const label of anomalyLabels) {
      expect(documentation, label).toContain(`| \`${label}\` | ${anomalyVocabulary[label].weight} | ${extraDifficultyBits[label] ?? 0} |`)
    }
  })
})

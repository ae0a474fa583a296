import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { chooseDifficulty } from '../../../src/domain/challenge/choose-difficulty.js'
import { extraDifficultyBits, MAX_EXTRA_DIFFICULTY, sumExtraDifficulty } from '../../../src/domain/risk/adaptive-difficulty.js'
import { anomalyLabels, anomalyVocabulary } from '../../../src/domain/risk/anomalies.js'
import { defaultSiteSettings } from '../../../src/domain/sites/site.js'

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

  it("keeps the default settings' hardest challenge at the 26 bits the SDK's README tells sites to expect on a phone", async () => {
    // Every label with extra bits at once: more than the cap.
    const everyLabel = sumExtraDifficulty(Object.keys(extraDifficultyBits) as (keyof typeof extraDifficultyBits)[])
    const { difficulty, maxStepUps } = defaultSiteSettings
    const first = chooseDifficulty({ baseDifficulty: difficulty, stepUps: 0, extraBits: everyLabel })
    const hardest = chooseDifficulty({ baseDifficulty: difficulty, stepUps: maxStepUps, extraBits: everyLabel })
    expect([first, hardest]).toEqual([22, 26])
    // Each step-up still costs more than the round before it (docs/risk.md): the extra bits are
    // capped on their own, not together with the rounds.
    expect(chooseDifficulty({ baseDifficulty: difficulty, stepUps: 1, extraBits: everyLabel })).toBeGreaterThan(first)
    const readme = await readFile(new URL('../../../sdk/README.md', import.meta.url), 'utf8')
    expect(readme).toContain(`first challenge of a visitor is at most ${first} bits`)
    expect(readme).toContain(`**${hardest} bits**`)
  })

  it('is documented in docs/risk.md with each label\'s weight and bits', async () => {
    const documentation = await readFile(new URL('../../../docs/risk.md', import.meta.url), 'utf8')
    for (const label of anomalyLabels) {
      expect(documentation, label).toContain(`| \`${label}\` | ${anomalyVocabulary[label].weight} | ${extraDifficultyBits[label] ?? 0} |`)
    }
  })
})

import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { hashText, hashTextCompact } from '../../sdk/src/signals/hash-text.js'

describe('fingerprint hashes', () => {
  it('are truncated SHA-256 where WebCrypto exists', async () => {
    const text = 'data:image/png;base64,iVBORw0KGgo'
    expect(await hashText(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32))
    expect(await hashText('')).toBe('')
  })

  it('fall back to a stable 128-bit hash that changes with every character', () => {
    const base = 'Google Inc. (Intel)|ANGLE (Intel, Mesa Intel(R) UHD Graphics 620)'
    expect(hashTextCompact(base)).toMatch(/^[0-9a-f]{32}$/)
    expect(hashTextCompact(base)).toBe(hashTextCompact(base))
    const seen = new Set<string>()
    for (let i = 0; i < base.length; i++) {
      const changed = `${base.slice(0, i)}${String.fromCharCode(base.charCodeAt(i) ^ 1)}${base.slice(i + 1)}`
      const hash = hashTextCompact(changed)
      // About half of the 128 bits flip for a one-bit change of the input.
      const flipped = [...(BigInt(`0x${hash}`) ^ BigInt(`0x${hashTextCompact(base)}`)).toString(2)].filter((bit) => bit === '1').length
      expect(flipped, `position ${i}`).toBeGreaterThan(32)
      seen.add(hash)
    }
    expect(seen.size).toBe(base.length)
    expect(hashTextCompact('ab')).not.toBe(hashTextCompact('ba'))
  })
})

import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createClientTagger, createClientTags, tagClient } from '../../../src/domain/challenge/client-tag.js'

const key = randomBytes(32)
const address = (index: number) => `10.0.${index >> 8}.${index & 255}`

/** A tagger over tagClient that counts the tags it had to compute (the HMACs). */
function countingTagger(capacity: number) {
  let computed = 0
  const tagOf = createClientTagger((clientIp) => {
    computed++
    return tagClient(key, clientIp)
  }, capacity)
  return { tagOf, computed: () => computed }
}

describe('client tags', () => {
  it('are 48 bits, base64url, stable per address and key, different across addresses and keys', () => {
    const tag = tagClient(key, '203.0.113.7')
    expect(tag).toMatch(/^[A-Za-z0-9_-]{8}$/)
    expect(tagClient(key, '203.0.113.7')).toBe(tag)
    expect(tagClient(key, '203.0.113.8')).not.toBe(tag)
    expect(tagClient(randomBytes(32), '203.0.113.7')).not.toBe(tag)
  })

  it('are remembered: the tagger answers what tagClient does and computes each address once while it is in use', () => {
    const { tagOf, computed } = countingTagger(100)
    for (let round = 0; round < 3; round++) {
      for (let index = 0; index < 50; index++) expect(tagOf(address(index))).toBe(tagClient(key, address(index)))
    }
    expect(computed()).toBe(50)
  })

  it('keep an address in use through a flood of new ones, while memory stays bounded', () => {
    const capacity = 100
    const { tagOf, computed } = countingTagger(capacity)
    const regular = '198.51.100.1'
    tagOf(regular)
    // Ten capacities' worth of one-off addresses, with the regular client coming back every 60 of them.
    for (let index = 1; index <= 10 * capacity; index++) {
      tagOf(address(index))
      if (index % 60 === 0) expect(tagOf(regular)).toBe(tagClient(key, regular))
    }
    // Computed once, never evicted; every one-off address once.
    expect(computed()).toBe(1 + 10 * capacity)
    // An address not seen for two capacities' worth of others is forgotten (and computed again).
    const before = computed()
    tagOf(address(1))
    expect(computed()).toBe(before + 1)
  })

  it("tag an address's group as its own tag for IPv4, and one tag for all of an IPv6 /64", () => {
    const tags = createClientTags(key)
    expect(tags.ofAddress('203.0.113.7')).toBe(tagClient(key, '203.0.113.7'))
    expect(tags.ofGroup('203.0.113.7')).toBe(tags.ofAddress('203.0.113.7'))
    expect(tags.ofGroup('203.0.113.8')).not.toBe(tags.ofGroup('203.0.113.7'))
    const group = tags.ofGroup('2001:db8:1:2::1')
    expect(group).toBe(tagClient(key, '20010db800010002::/64'))
    expect(tags.ofGroup('2001:db8:1:2:ffff::9')).toBe(group)
    expect(tags.ofGroup('2001:db8:1:3::1')).not.toBe(group)
    expect(tags.ofAddress('2001:db8:1:2::1')).not.toBe(group)
  })
})

import { describe, expect, it } from 'vitest'
import { isEmailAddress, normalizeEmailAddress } from '../../../src/domain/accounts/email-address.js'

describe('e-mail addresses', () => {
  it('takes addresses loosely, internationalised ones included', () => {
    for (const address of ['ada@example.com', 'a.b+tag@sub.example.co.uk', 'josé@exämple.de', '用户@例子.广告']) expect(isEmailAddress(address), address).toBe(true)
  })

  it('refuses what is not one, and bidirectional controls that would show an operator another address', () => {
    for (const address of ['ada', 'ada@example', '@example.com', 'a b@example.com', 'a@b@example.com', '\u202Emoc.elpmaxe@ada', 'ada@exa\u2067mple.com', 'ada\u200F@example.com']) {
      expect(isEmailAddress(address), JSON.stringify(address)).toBe(false)
    }
  })

  it('stores the address trimmed and in NFC', () => {
    expect(normalizeEmailAddress('  jose\u0301@example.com ')).toBe('jos\u00e9@example.com')
  })
})

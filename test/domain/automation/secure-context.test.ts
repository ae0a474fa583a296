import { describe, expect, it } from 'vitest'
import { isPotentiallyTrustworthy, isSecurePageOrigin } from '../../../src/domain/automation/secure-context.js'

describe('secure contexts', () => {
  it('trusts https and loopback hosts only', () => {
    expect(isPotentiallyTrustworthy('https', 'example.com')).toBe(true)
    expect(isPotentiallyTrustworthy('http', 'localhost')).toBe(true)
    expect(isPotentiallyTrustworthy('http', '127.0.0.5')).toBe(true)
    expect(isPotentiallyTrustworthy('http', '[::1]')).toBe(true)
    expect(isPotentiallyTrustworthy('http', 'example.com')).toBe(false)
    expect(isPotentiallyTrustworthy('http', '10.0.0.1')).toBe(false)
  })

  it('reads the page origin from an Origin or Referer value', () => {
    expect(isSecurePageOrigin('https://shop.example')).toBe(true)
    expect(isSecurePageOrigin('http://127.0.0.1:3000/demo')).toBe(true)
    expect(isSecurePageOrigin('http://shop.example')).toBe(false)
    expect(isSecurePageOrigin('null')).toBe(false)
    expect(isSecurePageOrigin(undefined)).toBe(false)
    expect(isSecurePageOrigin('not a url')).toBe(false)
  })
  it('answers the same the second time, from its memory of recent pages, and for pages too long to remember', () => {
    for (let round = 0; round < 2; round++) {
      expect(isSecurePageOrigin('https://shop.example')).toBe(true)
      expect(isSecurePageOrigin('http://shop.example')).toBe(false)
      expect(isSecurePageOrigin('not a url')).toBe(false)
      expect(isSecurePageOrigin(`https://shop.example/${'a'.repeat(600)}`)).toBe(true)
      expect(isSecurePageOrigin(`http://shop.example/${'a'.repeat(600)}`)).toBe(false)
    }
  })
})

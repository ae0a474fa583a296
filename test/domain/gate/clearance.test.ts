import { randomBytes, randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createHmac } from 'node:crypto'
import { CLEARANCE_RENEWAL_CAP_LIFETIMES, clearancesIn, issueClearance, MAX_CLEARANCES_TRIED, readClearance, renewalOf, type ClearanceHolder } from '../../../src/domain/gate/clearance.js'
import type { MacKey } from '../../../src/domain/mac.js'
import { compactRecurringUuid } from '../../../src/domain/challenge/compact-uuid.js'

const key = randomBytes(32)
/** Whether `text` passes for `holder` at `now`: readClearance gives its terms. */
const isClearedBy = (macKey: MacKey, text: string, clearanceHolder: ClearanceHolder, now: number) => readClearance(macKey, text, clearanceHolder, now) !== null
const holder: ClearanceHolder = { siteId: randomUUID(), userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0.0.0', addressGroup: '203.0.113.7' }
const now = Date.UTC(2026, 10, 28, 12)
const expiresAt = now + 3_600_000

describe('the gate clearance', () => {
  const clearance = issueClearance(key, holder, expiresAt)

  it('is a cookie value that holds no address or user agent in clear', () => {
    expect(clearance).toMatch(/^c2\.[A-Za-z0-9_-]{22}\.[0-9a-z]+\.[0-9a-z]+\.[sh]\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{43}$/)
    expect(clearance).not.toContain('203.0.113.7')
    expect(clearance).not.toContain('Mozilla')
  })

  it('lets its holder through until it expires, to the second', () => {
    expect(isClearedBy(key, clearance, holder, now)).toBe(true)
    expect(isClearedBy(key, clearance, holder, expiresAt - 1)).toBe(true)
    expect(isClearedBy(key, clearance, holder, expiresAt)).toBe(false)
  })

  it('is bound to its site, its browser and its address group', () => {
    expect(isClearedBy(key, clearance, { ...holder, siteId: randomUUID() }, now)).toBe(false)
    expect(isClearedBy(key, clearance, { ...holder, userAgent: `${holder.userAgent} Edg/131` }, now)).toBe(false)
    expect(isClearedBy(key, clearance, { ...holder, addressGroup: '203.0.113.8' }, now)).toBe(false)
  })

  it('is refused under another key, and when any character changes', () => {
    expect(isClearedBy(randomBytes(32), clearance, holder, now)).toBe(false)
    for (let index = 0; index < clearance.length; index++) {
      const character = clearance[index] === 'A' ? 'B' : 'A'
      const changed = `${clearance.slice(0, index)}${character}${clearance.slice(index + 1)}`
      expect(isClearedBy(key, changed, holder, now), `character ${index}`).toBe(false)
    }
  })

  it('refuses what is not a clearance', () => {
    for (const text of ['', 'c1', `${clearance}.`, `x${clearance}`, clearance.replace('c2.', 'c1.'), clearance.replace('c2.', 'c3.'), 'a'.repeat(5000)]) {
      expect(isClearedBy(key, text, holder, now)).toBe(false)
    }
  })

  it('is read from a Cookie header quoted or not, past junk clearance cookies that a sibling subdomain planted', () => {
    expect(clearancesIn(`a=1; tollgate_clearance="${clearance}"`)).toEqual([clearance])
    const junk = Array.from({ length: MAX_CLEARANCES_TRIED + 2 }, (_, index) => `tollgate_clearance=junk${index}`).join('; ')
    expect(clearancesIn(`${junk}; tollgate_clearance=${clearance}`)).toEqual([clearance])
  })

  it('looks at a bounded number of cookies and tries a bounded number of clearances', () => {
    const many = Array.from({ length: 500 }, (_, index) => `c${index}=1`).join('; ')
    expect(clearancesIn(`${many}; tollgate_clearance=${clearance}`)).toEqual([])
    expect(clearancesIn(Array.from({ length: 10 }, () => `tollgate_clearance=${clearance}`).join('; '))).toHaveLength(MAX_CLEARANCES_TRIED)
  })

  it('is renewed past half its life for a lifetime more, not before, and never past its cap', () => {
    const lifetime = 3_600_000
    const given = issueClearance(key, holder, expiresAt, { since: now, isSecure: true })
    const terms = readClearance(key, given, holder, now)
    expect(terms).toEqual({ since: now, expiresAt, isSecure: true })
    if (terms === null) return
    expect(renewalOf(terms, lifetime, now + lifetime / 2 - 1000)).toBeNull()
    expect(renewalOf(terms, lifetime, now + lifetime / 2)).toEqual({ since: now, expiresAt: now + lifetime / 2 + lifetime })
    const cap = now + CLEARANCE_RENEWAL_CAP_LIFETIMES * lifetime
    const late = { ...terms, expiresAt: cap - 1_000_000 }
    expect(renewalOf(late, lifetime, cap - 1_500_000)).toEqual({ since: now, expiresAt: cap })
    expect(renewalOf({ ...terms, expiresAt: cap }, lifetime, cap - 1000)).toBeNull()
  })

  it('still lets a clearance of the earlier format through, without renewing it', () => {
    const signedText = `c1.${compactRecurringUuid(holder.siteId)}.${Math.floor(expiresAt / 1000).toString(36)}.${createHmac('sha256', key).update(`holder|${holder.userAgent}\n${holder.addressGroup}`).digest('base64url').slice(0, 16)}`
    const earlier = `${signedText}.${createHmac('sha256', key).update(signedText).digest('base64url')}`
    const terms = readClearance(key, earlier, holder, now)
    expect(terms).toEqual({ since: null, expiresAt, isSecure: false })
    if (terms !== null) expect(renewalOf(terms, 3_600_000, expiresAt - 1000)).toBeNull()
  })
})

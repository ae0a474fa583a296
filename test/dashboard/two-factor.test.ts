import { describe, expect, it } from 'vitest'
import { cleanCode, groupSecretKey, recoveryCodesText } from '../../dashboard/src/lib/two-factor.js'

describe('two-factor authentication on the dashboard', () => {
  it('shows the setup key in groups of four, for typing in by hand', () => {
    expect(groupSecretKey('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP')).toBe('JBSW Y3DP EHPK 3PXP JBSW Y3DP EHPK 3PXP')
    expect(groupSecretKey('JBSWY3DPEH')).toBe('JBSW Y3DP EH')
    expect(groupSecretKey('')).toBe('')
  })

  it("sends a code without the spaces an app shows or a copy brings along", () => {
    expect(cleanCode(' 123 456\n')).toBe('123456')
    expect(cleanCode('k7m2-x9q4-r3tz ')).toBe('k7m2-x9q4-r3tz')
  })

  it('writes the recovery codes into a text file that names the account and the server', () => {
    const text = recoveryCodesText({
      email: 'you@example.com',
      origin: 'https://tollgate.example.com',
      codes: ['k7m2-x9q4-r3tz', 'a1b2-c3d4-e5f6'],
      madeAt: new Date('2026-11-29T03:28:34.000Z'),
    })
    expect(text.split('\n')).toEqual([
      'Tollgate recovery codes for you@example.com at https://tollgate.example.com',
      'Made 2026-11-29T03:28:34.000Z. Each code logs you in once, in place of an authentication code;',
      'new codes made on the Account page replace all of these.',
      '',
      'k7m2-x9q4-r3tz',
      'a1b2-c3d4-e5f6',
      '',
    ])
  })
})

import { describe, expect, it } from 'vitest'
import { MIN_PASSWORD_LENGTH, newPasswordHint } from '../../dashboard/src/lib/password-rules.js'
import { findPasswordProblem, PASSWORD_MIN_LENGTH } from '../../src/domain/accounts/password.js'

describe("the dashboard's hint under a new password", () => {
  it("tells the API's rules: the length, no common password, no one character repeated, not the e-mail address", () => {
    expect(MIN_PASSWORD_LENGTH).toBe(PASSWORD_MIN_LENGTH)
    expect(newPasswordHint).toContain(`At least ${PASSWORD_MIN_LENGTH} characters`)
    expect(newPasswordHint).toContain('not a common password (such as password123)')
    expect(newPasswordHint).toContain('not one character repeated')
    expect(newPasswordHint).toContain('not containing your e-mail address')
    // The example it gives is one the API refuses.
    expect(findPasswordProblem('password123', 'owner@example.com')).toMatch(/^is too common/)
  })
})

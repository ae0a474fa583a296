import { describe, expect, it } from 'vitest'
import { fieldSentence, sortFieldErrors } from '../../dashboard/src/lib/field-errors.js'

describe('field errors', () => {
  const sentences: [string, string][] = [
    ['must be at least 10 characters', 'Use at least 10 characters.'],
    ['must be at most 256 characters', 'Use at most 256 characters.'],
    ['is not your current password', 'This is not your current password.'],
    ['must be one of: hour, day', 'This must be one of: hour, day.'],
    ["not the code in the server's log", "Not the code in the server's log."],
    ['Enter a name.', 'Enter a name.'],
  ]
  it("turns the API's fragments into sentences under their fields, a length rule into what to do", () => {
    expect(sentences.map(([message]) => fieldSentence(message))).toEqual(sentences.map(([, sentence]) => sentence))
  })

  it('places each detail beside its field as sentences, and keeps the field name in what no field shows', () => {
    const sorted = sortFieldErrors(
      [
        { field: 'password', message: 'must be at least 10 characters' },
        { field: 'password', message: 'must not contain line breaks or other control characters' },
        { field: 'setupCode', message: 'is required' },
      ],
      ['email', 'password'],
    )
    expect(sorted.byField).toEqual({ password: 'Use at least 10 characters. This must not contain line breaks or other control characters.' })
    expect(sorted.general).toEqual(['setupCode: is required'])
  })
})

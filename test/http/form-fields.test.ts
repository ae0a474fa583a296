import { describe, expect, it } from 'vitest'
import { ApiError } from '../../src/errors.js'
import { findMalformedQueryEscape, parseFormFields } from '../../src/http/form-fields.js'

describe('parseFormFields', () => {
  it.each([
    ['', {}],
    ['secret=a&response=b', { secret: 'a', response: 'b' }],
    // Split as @fastify/formbody's parser split: empty pairs skipped, a name alone has the empty value.
    ['a=1&&b=2&', { a: '1', b: '2' }],
    ['a&b=1', { a: '', b: '1' }],
    ['=x', { '': 'x' }],
    ['a=1=2', { a: '1=2' }],
    ['a+b=c+d%2B%26%3D', { 'a b': 'c d+&=' }],
    ['k=caf%C3%A9%F0%9F%98%80&raw=café😀', { k: 'café😀', raw: 'café😀' }],
    // Sent twice: both values, which the routes' schemas refuse (a string is expected).
    ['a=x&a=y&a=z', { a: ['x', 'y', 'z'] }],
  ])('reads %j', (text, fields) => {
    expect({ ...(parseFormFields(text) as object) }).toEqual(fields)
  })

  it('keeps __proto__ a field, on an object without a prototype', () => {
    const fields = parseFormFields('__proto__=x&constructor=y')
    expect(Object.getPrototypeOf(fields)).toBeNull()
    expect(Object.entries(fields)).toEqual([['__proto__', 'x'], ['constructor', 'y']])
  })

  it.each(['k=%FF', 'k=%FE', '%FF=1', 'k=a%C3', 'k=%ED%A0%80', 'k=%C0%AF', 'k=%F4%90%80%80', 'k=100%25%FF', 'k=%ZZ%FF'])(
    'refuses %j: an escape that is not UTF-8',
    (text) => {
      const refused = parseFormFields(text)
      expect(refused).toBeInstanceOf(ApiError)
      expect(refused).toMatchObject({ code: 'validation_error', statusCode: 400 })
    },
  )

  it.each([
    ['k=100%', '100%'],
    ['k=%ZZ', '%ZZ'],
    ['k=%E', '%E'],
    ['k=fe80::1%eth0', 'fe80::1%eth0'],
    ['k=50%25+off%', '50% off%'],
    ['k=caf%C3%A9%', 'café%'],
  ])('keeps a %% that begins no escape as written in %j, as browsers do', (text, value) => {
    expect(parseFormFields(text)).toEqual(Object.assign(Object.create(null) as object, { k: value }))
  })
})

describe('findMalformedQueryEscape', () => {
  it('names the parameter whose value has a %-escape that is not UTF-8', () => {
    expect(findMalformedQueryEscape('q=%C3%28')).toBe('q')
    expect(findMalformedQueryEscape('sort=name&q=%FF')).toBe('q')
    expect(findMalformedQueryEscape('caf%C3%A9=%E9')).toBe('café')
    // An encoded surrogate and an overlong encoding are not UTF-8 either.
    expect(findMalformedQueryEscape('q=%ED%A0%80')).toBe('q')
    expect(findMalformedQueryEscape('q=%C0%AF')).toBe('q')
  })

  it("is '' when a name itself has one", () => {
    expect(findMalformedQueryEscape('%FF=1')).toBe('')
    expect(findMalformedQueryEscape('a=1&%FF')).toBe('')
  })

  it('finds nothing in UTF-8 escapes, raw text or a % that begins no escape', () => {
    expect(findMalformedQueryEscape('')).toBeUndefined()
    expect(findMalformedQueryEscape('q=b%C3%BCcher&sort=name')).toBeUndefined()
    expect(findMalformedQueryEscape('q=bücher+shop')).toBeUndefined()
    expect(findMalformedQueryEscape('q=100%&x=%25FF')).toBeUndefined()
  })
})

import { describe, expect, it } from 'vitest'
import { isOriginAllowed, readRequestOrigin } from '../../../src/domain/public-access/request-origin.js'

describe('readRequestOrigin', () => {
  it.each([
    ['https://shop.example.com', undefined, 'shop.example.com'],
    ['http://localhost:3000', undefined, 'localhost'],
    ['https://EXAMPLE.com', undefined, 'example.com'],
    ['https://bücher.example', undefined, 'xn--bcher-kva.example'],
    ['http://[::1]:8080', undefined, '::1'],
    // A fully qualified name's trailing dot names the same host.
    ['https://example.com.', undefined, 'example.com'],
    [undefined, 'https://www.example.com.:8443/page', 'www.example.com'],
    [undefined, 'https://blog.example.org/post?id=1', 'blog.example.org'],
    // Origin alone decides when sent: a Referer does not stand in for an Origin that names no host.
    ['null', 'https://framed.example/page', null],
    ['not a url', 'https://framed.example/page', null],
    ['https://shop.example.com', 'https://other.example/page', 'shop.example.com'],
    ['', 'https://blog.example.org/post', 'blog.example.org'],
    ['null', undefined, null],
    // Apps' pages at their own schemes (docs/apps.md): the host as for http(s), in lower case.
    ['capacitor://localhost', undefined, 'localhost'],
    ['capacitor://LocalHost', undefined, 'localhost'],
    ['myapp://App.Example', undefined, 'app.example'],
    ['file://', undefined, null],
    ['myapp:///index.html', undefined, null],
    ['not a url', undefined, null],
    // Longer than any DNS name: names nothing, whatever the site lists.
    [`https://${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.example.com`, undefined, null],
    [`https://${'x.'.repeat(2_000)}example.com`, undefined, null],
    [undefined, undefined, null],
  ])('Origin %j, Referer %j: hostname %j', (origin, referer, hostname) => {
    expect(readRequestOrigin(origin, referer).hostname).toBe(hostname)
  })

  it('says whether either header was sent', () => {
    expect(readRequestOrigin(undefined, undefined).hasOrigin).toBe(false)
    expect(readRequestOrigin('', '').hasOrigin).toBe(false)
    expect(readRequestOrigin('null', undefined).hasOrigin).toBe(true)
  })
})

describe('isOriginAllowed', () => {
  const domains = ['example.com', 'shop.test']
  it.each([
    ['example.com', true],
    ['www.example.com', true],
    ['a.b.example.com', true],
    ['shop.test', true],
    ['evil-example.com', false],
    ['example.com.evil.test', false],
    ['test', false],
  ])('%s: %s', (hostname, allowed) => {
    expect(isOriginAllowed({ hostname, hasOrigin: true }, domains)).toBe(allowed)
  })

  it('allows a page opened at the listed name with its trailing dot (https://www.example.com./)', () => {
    expect(isOriginAllowed(readRequestOrigin('https://www.example.com.', undefined), domains)).toBe(true)
    expect(isOriginAllowed(readRequestOrigin('https://evil-example.com.', undefined), domains)).toBe(false)
  })

  it('allows any origin when the site lists no domains', () => {
    expect(isOriginAllowed({ hostname: 'anything.example', hasOrigin: true }, [])).toBe(true)
  })

  it('lets a request without Origin or Referer through (it is scored instead)', () => {
    expect(isOriginAllowed({ hostname: null, hasOrigin: false }, domains)).toBe(true)
  })

  it('refuses an origin without a host when domains are listed', () => {
    expect(isOriginAllowed({ hostname: null, hasOrigin: true }, domains)).toBe(false)
  })

  it('refuses Origin: null even beside a Referer on a listed domain', () => {
    expect(isOriginAllowed(readRequestOrigin('null', 'https://www.example.com/signup'), domains)).toBe(false)
  })
})

import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import { describe, expect, it } from 'vitest'
import { parseAddress } from '../../../src/domain/network/ip-address.js'

describe('parseAddress', () => {
  it('reads an IPv4 address as its 32-bit number', () => {
    expect(parseAddress('8.8.4.4')).toEqual({ family: 4, text: '8.8.4.4', value: 0x08080404, isPublic: true })
    expect(parseAddress('255.255.255.254')?.value).toBe(0xfffffffe)
  })

  it('treats an IPv4-mapped IPv6 address as the IPv4 address it carries', () => {
    expect(parseAddress('::ffff:8.8.4.4')).toEqual(parseAddress('8.8.4.4'))
  })

  it('reads an IPv6 address as a 128-bit number and canonical text', () => {
    const address = parseAddress('2001:DB8:0:0::1')
    expect(address?.family).toBe(6)
    expect(address?.text).toBe('2001:db8::1')
    expect(address?.value).toBe((0x20010db8n << 96n) + 1n)
    expect(parseAddress('2a00:1450:4001::1')?.isPublic).toBe(true)
  })

  it('marks private, loopback, link-local and shared ranges as not public', () => {
    for (const raw of ['127.0.0.1', '10.0.0.1', '192.168.1.1', '172.16.0.1', '100.64.0.1', '169.254.1.1', '::1', 'fe80::1%eth0', 'fd00::1']) {
      expect(parseAddress(raw)?.isPublic, raw).toBe(false)
    }
  })

  it('refuses what is not an address', () => {
    for (const raw of ['', 'localhost', '1.2.3', '1.2.3.256', '::g', 'unknown', '1.2.3.4.5', '01.2.3.4', '1..3.4', '1.2.3.4 x']) {
      expect(parseAddress(raw), raw).toBeUndefined()
    }
  })

  it('judges IPv4 addresses as ipaddr.js does, at every special range edge and at random', () => {
    const samples: string[] = []
    for (const [network, bits] of Object.values((ipaddr.IPv4.prototype as unknown as { SpecialRanges: Record<string, [ipaddr.IPv4, number][]> }).SpecialRanges).flat()) {
      const [a = 0, b = 0, c = 0, d = 0] = network.toByteArray()
      const first = ((a * 256 + b) * 256 + c) * 256 + d
      for (const value of [first - 1, first, first + 2 ** (32 - bits) - 1, first + 2 ** (32 - bits)]) {
        if (value >= 0 && value < 2 ** 32) samples.push([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.'))
      }
    }
    for (let index = 0; index < 20_000; index++) samples.push(Array.from({ length: 4 }, () => Math.floor(Math.random() * 256)).join('.'))
    for (const raw of samples) {
      expect(isIP(raw), raw).toBe(4)
      const reference = ipaddr.parse(raw)
      expect(parseAddress(raw), raw).toEqual({
        family: 4,
        text: reference.toString(),
        value: reference.toByteArray().reduce((value, byte) => value * 256 + byte, 0),
        isPublic: reference.range() === 'unicast',
      })
    }
  })
})

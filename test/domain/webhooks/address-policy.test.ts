import { describe, expect, it } from 'vitest'
import { findRefusedRange, isPublicAddress } from '../../../src/domain/webhooks/address-policy.js'

describe('findRefusedRange', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.1.1', 'linkLocal'],
    ['169.254.169.254', 'metadata'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.100.100.200', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
  ])('refuses IPv4 %s (%s)', (address, range) => {
    expect(findRefusedRange(address)).toBe(range)
    expect(isPublicAddress(address)).toBe(false)
  })

  it.each([
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fd00:ec2::254', 'metadata'],
    ['FD00:EC2:0::254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
    ['[::1]', 'loopback'],
    // IPv4-compatible (::a.b.c.d), judged as the IPv4 address it carries.
    ['::7f00:1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['::169.254.169.254', 'metadata'],
    ['::10.0.0.1', 'private'],
  ])('refuses IPv6 %s (%s)', (address, range) => {
    expect(findRefusedRange(address)).toBe(range)
  })

  it.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
  ])('judges the IPv4 address inside IPv4-mapped %s (%s)', (address, range) => {
    expect(findRefusedRange(address)).toBe(range)
  })

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows public %s', (address) => {
    expect(findRefusedRange(address)).toBeUndefined()
    expect(isPublicAddress(address)).toBe(true)
  })

  it.each(['localhost', '', '1.2.3', '2130706433', '0x7f000001', '999.1.1.1'])('refuses %j, which is not a canonical IP address', (address) => {
    expect(findRefusedRange(address)).toBe('invalid')
  })
})

describe('findRefusedRange with private addresses allowed (development)', () => {
  it.each(['127.0.0.1', '::1', '10.1.2.3', '192.168.1.1', '172.16.0.1', '100.64.0.1', 'fd12:3456::1', '::ffff:127.0.0.1', '8.8.8.8', '64:ff9b::a00:1', '2002:c0a8:101::1'])('lets %s through', (address) => {
    expect(findRefusedRange(address, { allowPrivate: true })).toBeUndefined()
  })

  it.each([
    ['169.254.169.254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['169.254.1.1', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    // Carried inside an IPv6 transition address, to a gateway that translates it.
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    // The local-use prefix, whose IPv4 address sits where the network's prefix length puts it (here a /48's).
    ['64:ff9b:1::a9fe:a9fe', 'localUseNat64'],
    ['64:ff9b:1:a9fe:a9:fe00::', 'localUseNat64'],
    ['2002:a9fe:a9fe::', 'metadata'],
    ['2002:a9fe:0101::1', 'linkLocal'],
    ['2001:0:4136:e378:8000:63bf:5601:5601', 'metadata'],
  ])('still refuses %s (%s): no receiver lives there, cloud credentials do', (address, range) => {
    expect(findRefusedRange(address, { allowPrivate: true })).toBe(range)
  })
})

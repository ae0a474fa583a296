import { describe, expect, it } from 'vitest'
import { parseTorExitList } from '../../../src/domain/network/tor-exit-list.js'

describe('parseTorExitList', () => {
  it('reads the bulk list and the exit-addresses document, ignoring everything else', () => {
    const list = parseTorExitList([
      '# comment',
      '185.220.101.1',
      'ExitNode 0011BD2485AD45D984EC4159C88FC066E5E3300E',
      'Published 2026-01-01 00:00:00',
      'ExitAddress 204.8.96.1 2026-01-01 00:10:00',
      '2001:DB8::10',
      'not an address',
      '',
    ].join('\n'))
    expect([...list].sort()).toEqual(['185.220.101.1', '2001:db8::10', '204.8.96.1'])
  })
})

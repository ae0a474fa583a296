import { beforeAll, describe, expect, it } from 'vitest'
import { MAX_API_KEY_ADDRESSES } from '../../src/domain/accounts/api-key-addresses.js'
import { askForKey as askAs, createKey as createAs, errorOf, type CreatedKey } from '../helpers/api-keys.js'
import { asBrowser, type TestAccount } from '../helpers/dashboard-client.js'
import { useAppWithOwner } from '../helpers/site-sharing.js'
import { deployments, type TestApp } from '../helpers/test-app.js'

/** The proxy the suite's service trusts (TRUST_PROXY): only its X-Forwarded-For is believed. */
const PROXY = '10.0.0.1'
const OFFICE = '203.0.113.0/24'
const RUNNERS = '2001:db8::/48'

interface ListedKey {
  id: string
  allowedAddresses: string[] | null
  lastUsedAt: string | null
}

interface AuditEvent {
  action: string
  details: Record<string, unknown>
}

/** API keys that may be used from some addresses only (allowedAddresses). */
describe.each(deployments)('API keys for some addresses only on $name', (deployment) => {
  const { available } = deployment
  const suite = useAppWithOwner(deployment, { trustProxy: [PROXY] })
  let service: TestApp
  let account: TestAccount
  beforeAll(() => {
    if (available) ({ service, owner: account } = suite)
  })

  const askForKey = (payload: object) => askAs(service.app, account, payload)
  const createKey = async (payload: object) => (await createAs(service.app, account, payload)) as CreatedKey & { allowedAddresses: string[] | null }
  /** A request with the key, from `remoteAddress` (as the socket's peer) and, when given, through the trusted proxy. */
  const fromAddress = (key: string, remoteAddress: string, options: { forwardedFor?: string; method?: 'GET' | 'PATCH'; url?: string; payload?: object } = {}) =>
    service.app.inject({
      method: options.method ?? 'GET',
      url: options.url ?? '/api/v1/me',
      remoteAddress,
      headers: { authorization: `Bearer ${key}`, ...(options.forwardedFor === undefined ? {} : { 'x-forwarded-for': options.forwardedFor }) },
      ...(options.payload === undefined ? {} : { payload: options.payload }),
    })
  const listed = async (id: string) => {
    const keys = (await service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: asBrowser(account) })).json<{ items: ListedKey[] }>().items
    return keys.find((key) => key.id === id)
  }
  const auditEvents = async (action: string, apiKeyId: string) => {
    const response = await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?action=${action}`, headers: asBrowser(account) })
    return response.json<{ items: AuditEvent[] }>().items.filter((event) => event.details.apiKeyId === apiKeyId)
  }
  const editAsSession = (id: string, payload: object) =>
    service.app.inject({ method: 'PATCH', url: `/api/v1/api-keys/${id}`, headers: asBrowser(account), payload })

  it.skipIf(!available)('works from its addresses only: any other is a 403 api_key_address_refused, not recorded as a use', async () => {
    const key = await createKey({ name: 'deploys', allowedAddresses: [' 203.0.113.77/24', '2001:DB8:0:0::/48', '203.0.113.0/24'] })
    // Canonical and each once, as the list, the answer and the audit log show them.
    expect(key.allowedAddresses).toEqual([OFFICE, RUNNERS])
    expect((await listed(key.id))?.allowedAddresses).toEqual([OFFICE, RUNNERS])
    expect((await auditEvents('api_key.created', key.id)).map((event) => event.details.allowedAddresses)).toEqual([[OFFICE, RUNNERS]])

    for (const elsewhere of ['198.51.100.7', '203.0.114.1', '2001:db9::1', '127.0.0.1']) {
      const refused = await fromAddress(key.key, elsewhere)
      expect(refused.statusCode, elsewhere).toBe(403)
      expect(errorOf(refused), elsewhere).toMatchObject({ code: 'api_key_address_refused', message: expect.stringContaining(elsewhere) })
      // The holder is told the address seen, never the list: a key found elsewhere learns no address to try.
      expect(errorOf(refused).message, elsewhere).not.toContain('203.0.113.0')
    }
    expect((await listed(key.id))?.lastUsedAt).toBeNull()
    // The account reads the attempts in its audit log: one event this hour, counting them, the key its actor.
    const refusals = await service.app.inject({ method: 'GET', url: '/api/v1/audit-log?action=api_key.address_refused', headers: asBrowser(account) })
    const [refusal, ...others] = refusals.json<{ items: (AuditEvent & { actor: Record<string, unknown> })[] }>().items.filter((event) => event.details.apiKeyId === key.id)
    expect(others).toEqual([])
    expect(refusal?.details).toMatchObject({ name: 'deploys', count: 4, addresses: ['198.51.100.7', '203.0.114.1', '2001:db9::1', '127.0.0.1'] })
    expect(refusal?.details.variants).toEqual([{ apiKeyId: key.id, name: 'deploys', prefix: expect.stringMatching(/^tgak_/) }])
    expect(refusal?.actor).toMatchObject({ type: 'api-key', id: key.id, name: 'deploys', clientIp: '127.0.0.1', email: account.email })

    for (const inside of ['203.0.113.200', '::ffff:203.0.113.5', '2001:db8:0:1234::9']) {
      const used = await fromAddress(key.key, inside)
      expect(used.statusCode, inside).toBe(200)
      expect(used.json(), inside).toMatchObject({ email: account.email })
    }
    expect((await listed(key.id))?.lastUsedAt).toEqual(expect.any(String))
  })

  it.skipIf(!available)('takes the client address behind a trusted proxy only (TRUST_PROXY)', async () => {
    const key = await createKey({ name: 'behind the proxy', allowedAddresses: [OFFICE] })
    expect((await fromAddress(key.key, PROXY, { forwardedFor: '203.0.113.9' })).statusCode).toBe(200)
    const outside = await fromAddress(key.key, PROXY, { forwardedFor: '198.51.100.7' })
    expect(outside.statusCode).toBe(403)
    expect(errorOf(outside).code).toBe('api_key_address_refused')
    // A header from a peer that is not the proxy is not believed: the peer's own address decides.
    const spoofed = await fromAddress(key.key, '198.51.100.7', { forwardedFor: '203.0.113.9' })
    expect(spoofed.statusCode).toBe(403)
    expect(errorOf(spoofed).message).toContain('198.51.100.7')
  })

  it.skipIf(!available)('refuses a list that is not one, field by field, and makes no key', async () => {
    const before = (await service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: asBrowser(account) })).json<{ items: unknown[] }>().items.length
    const bad = await askForKey({ allowedAddresses: ['203.0.113.7', 'office', '0.0.0.0/0', '10.0.0.0/33', '2000::/3', '::ffff:0:0/96'] })
    expect(bad.statusCode).toBe(400)
    expect(errorOf(bad).code).toBe('validation_error')
    expect(errorOf(bad).details?.map((detail) => detail.field)).toEqual([
      'allowedAddresses.1',
      'allowedAddresses.2',
      'allowedAddresses.3',
      'allowedAddresses.4',
      'allowedAddresses.5',
    ])
    expect(errorOf(bad).details?.[1]?.message).toMatch(/wider than \/8/)

    const empty = await askForKey({ allowedAddresses: [] })
    expect(empty.statusCode).toBe(400)
    expect(errorOf(empty).code).toBe('validation_error')

    const tooMany = Array.from({ length: MAX_API_KEY_ADDRESSES + 1 }, (_, index) => `198.51.${Math.floor(index / 250)}.${index % 250}`)
    const long = await askForKey({ allowedAddresses: tooMany })
    expect(long.statusCode).toBe(400)
    expect(errorOf(long).details).toEqual([{ field: 'allowedAddresses', message: `must list at most ${MAX_API_KEY_ADDRESSES} distinct addresses or ranges` }])
    // Repeats are dropped before the entries are counted.
    const repeated = await createKey({ allowedAddresses: [...Array.from({ length: MAX_API_KEY_ADDRESSES }, () => '198.51.100.1'), '198.51.100.2'] })
    expect(repeated.allowedAddresses).toEqual(['198.51.100.1', '198.51.100.2'])

    const after = (await service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: asBrowser(account) })).json<{ items: unknown[] }>().items.length
    expect(after).toBe(before + 1)
  })

  it.skipIf(!available)('is narrowed by any credential that may use the key, and widened from a session with the password only', async () => {
    const key = await createKey({ name: 'narrowing', allowedAddresses: [OFFICE, RUNNERS] })
    const office = '203.0.113.9'
    const patch = (payload: object, from = office) => fromAddress(key.key, from, { method: 'PATCH', url: `/api/v1/api-keys/${key.id}`, payload })

    // Narrowed by the key itself, from an address it may be used from: a range within one it has.
    const narrowed = await patch({ allowedAddresses: ['203.0.113.0/28'] })
    expect(narrowed.statusCode).toBe(200)
    expect(narrowed.json<ListedKey>().allowedAddresses).toEqual(['203.0.113.0/28'])
    expect((await fromAddress(key.key, '2001:db8::1')).statusCode).toBe(403)

    // Widening it again, or to any address, is not for a key: not even from its own address.
    for (const allowedAddresses of [[OFFICE], null, ['203.0.113.0/28', '198.51.100.7']]) {
      const refused = await patch({ allowedAddresses })
      expect(refused.statusCode, JSON.stringify(allowedAddresses)).toBe(403)
      expect(errorOf(refused).code).toBe('api_key_widening_forbidden')
    }
    // A bad entry is a 400, whether or not the rest would widen the key, and changes nothing.
    const bad = await patch({ allowedAddresses: ['203.0.113.1', 'nowhere'] })
    expect(bad.statusCode).toBe(400)
    expect(errorOf(bad).details).toEqual([expect.objectContaining({ field: 'allowedAddresses.1' })])
    expect((await listed(key.id))?.allowedAddresses).toEqual(['203.0.113.0/28'])

    // The session widens it with the password; without, it is told the password is needed.
    const unconfirmed = await editAsSession(key.id, { allowedAddresses: null })
    expect(unconfirmed.statusCode).toBe(400)
    expect(errorOf(unconfirmed).details).toEqual([expect.objectContaining({ field: 'password' })])
    const widened = await editAsSession(key.id, { allowedAddresses: null, password: account.password })
    expect(widened.statusCode).toBe(200)
    expect(widened.json<ListedKey>().allowedAddresses).toBeNull()
    expect((await fromAddress(key.key, '198.51.100.7')).statusCode).toBe(200)

    // A key with no list is narrowed to one by the session without a password.
    expect((await editAsSession(key.id, { allowedAddresses: ['198.51.100.0/24'] })).statusCode).toBe(200)
    expect((await fromAddress(key.key, office)).statusCode).toBe(403)

    const changes = (await auditEvents('api_key.updated', key.id)).map((event) => event.details.changes)
    expect(changes).toEqual([
      [{ field: 'allowedAddresses', from: null, to: ['198.51.100.0/24'] }],
      [{ field: 'allowedAddresses', from: ['203.0.113.0/28'], to: null }],
      [{ field: 'allowedAddresses', from: [OFFICE, RUNNERS], to: ['203.0.113.0/28'] }],
    ])
  })
})

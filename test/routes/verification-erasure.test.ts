import { beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, asScript, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { parseCsv } from '../helpers/csv.js'
import { expectValidationError, type AuditEvent } from '../helpers/log-export.js'
import { useAppWithOwner } from '../helpers/site-sharing.js'
import { deployments, type TestApp } from '../helpers/test-app.js'
import { insertVerifications, type VerificationRow } from '../helpers/verification-rows.js'

const visitor = '203.0.113.7'
const device = 'a1b2c3d4e5f6a7b8c9d0e1f2'
const otherDevice = '0f0e0d0c0b0a090807060504'

interface LogPage {
  items: { id: string; clientIp: string | null; device: string | null }[]
  nextCursor: string | null
}

interface Totals {
  allow: number
  challenge: number
  block: number
  rejected: number
  total: number
}

/** A data subject's access and erasure requests, through the API: the log found and deleted by address or device. */
describe.each(deployments)("a visitor's rows found and deleted by address or device, on $name", (deployment) => {
  const { available } = deployment
  const suite = useAppWithOwner(deployment)
  let service: TestApp
  let account: TestAccount
  beforeAll(() => {
    if (available) ({ service, owner: account } = suite)
  })

  const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000)

  /** A site whose log holds the visitor's rows (by two spellings of its address, and its device from elsewhere) and others'. */
  async function siteWithVisitor(): Promise<{ site: CreatedSite; ids: Record<string, string> }> {
    const site = await createTestSite(service.app, account)
    const rows: Record<string, VerificationRow> = {
      plain: { siteId: site.id, createdAt: minutesAgo(5), action: 'allow', clientIp: visitor, device, countryCode: 'NL', anomalies: ['missing_origin'] },
      // A dual-stack listener reports an IPv4 peer so: the same visitor.
      mapped: { siteId: site.id, createdAt: minutesAgo(4), action: 'block', riskScore: 90, clientIp: `::ffff:${visitor}`, device: otherDevice, countryCode: 'NL' },
      rejected: { siteId: site.id, createdAt: minutesAgo(3), action: 'rejected', clientIp: visitor },
      // The visitor's device, from another address.
      elsewhere: { siteId: site.id, createdAt: minutesAgo(2), action: 'challenge', riskScore: 50, clientIp: '198.51.100.9', device, countryCode: 'DE' },
      // Addresses that only begin like the visitor's, and an IPv6 one.
      longer: { siteId: site.id, createdAt: minutesAgo(1), action: 'allow', clientIp: '203.0.113.70', countryCode: 'FR' },
      ipv6: { siteId: site.id, createdAt: minutesAgo(1), action: 'allow', clientIp: '2001:db8::1', device: otherDevice, countryCode: 'FR' },
    }
    const written = await insertVerifications(service.app.database, Object.values(rows))
    return { site, ids: Object.fromEntries(Object.keys(rows).map((name, index) => [name, written[index] ?? ''])) }
  }

  const list = (site: CreatedSite, query: string, headers = asScript(account)) =>
    service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications${query}`, headers })
  const erase = (site: CreatedSite, query: string, headers = asBrowser(account)) =>
    service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}/verifications${query}`, headers })
  const listedIds = async (site: CreatedSite, query = '') => {
    const response = await list(site, query)
    expect(response.statusCode, response.body).toBe(200)
    return response.json<LogPage>().items.map((item) => item.id).sort()
  }
  const totalsOf = async (site: CreatedSite) => {
    const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/stats`, headers: asScript(account) })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<{ totals: Totals; topCountries: { countryCode: string; count: number }[] }>()
  }

  it.runIf(available)("lists and exports a visitor address's rows, in either spelling of it, and no other address's", async () => {
    const { site, ids } = await siteWithVisitor()
    expect(await listedIds(site, `?clientIp=${visitor}`)).toEqual([ids.plain, ids.mapped, ids.rejected].sort())
    expect(await listedIds(site, `?clientIp=::ffff:${visitor}`)).toEqual([ids.plain, ids.mapped, ids.rejected].sort())
    expect(await listedIds(site, `?clientIp=2001:DB8:0:0:0:0:0:1`)).toEqual([ids.ipv6])
    expect(await listedIds(site, `?clientIp=${visitor}&action=block`)).toEqual([ids.mapped])
    expect(await listedIds(site, '?clientIp=192.0.2.1')).toEqual([])

    const csv = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications/export?clientIp=${visitor}`, headers: asScript(account) })
    expect(csv.statusCode, csv.body).toBe(200)
    const [header, ...records] = parseCsv(csv.body)
    const column = header!.indexOf('clientIp')
    expect(records.map((record) => record[column]).sort()).toEqual([visitor, visitor, `::ffff:${visitor}`].sort())
  })

  it.runIf(available)('refuses a clientIp that is not an IP address, naming it, on the listing, the export and the deletion', async () => {
    const { site } = await siteWithVisitor()
    for (const value of ['not-an-address', '203.0.113', '203.0.113.0/24', '203.0.113.*', 'fe80::1%eth0', '']) {
      const query = `?clientIp=${encodeURIComponent(value)}`
      expectValidationError(await list(site, query), 'querystring.clientIp')
      expectValidationError(await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications/export${query}`, headers: asScript(account) }), 'querystring.clientIp')
      expectValidationError(await erase(site, query), 'querystring.clientIp')
    }
    expect(await listedIds(site)).toHaveLength(6)
  })

  it.runIf(available)("deletes a visitor address's rows, answers how many, keeps the others, and the stats count only the rows kept", async () => {
    const { site, ids } = await siteWithVisitor()
    const other = await createTestSite(service.app, account)
    const [othersRow] = await insertVerifications(service.app.database, [{ siteId: other.id, createdAt: minutesAgo(5), action: 'allow', clientIp: visitor }])
    expect((await totalsOf(site)).totals).toEqual({ allow: 3, challenge: 1, block: 1, rejected: 1, total: 6 })

    const response = await erase(site, `?clientIp=${visitor}`)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual({ deleted: 3 })

    expect(await listedIds(site)).toEqual([ids.elsewhere, ids.longer, ids.ipv6].sort())
    expect(await listedIds(site, `?clientIp=${visitor}`)).toEqual([])
    expect(await listedIds(other, `?clientIp=${visitor}`)).toEqual([othersRow])
    const stats = await totalsOf(site)
    expect(stats.totals).toEqual({ allow: 2, challenge: 1, block: 0, rejected: 0, total: 3 })
    expect(stats.topCountries).toEqual([
      { countryCode: 'FR', count: 2 },
      { countryCode: 'DE', count: 1 },
    ])
    // Again: nothing left to delete.
    expect((await erase(site, `?clientIp=${visitor}`)).json()).toEqual({ deleted: 0 })
  })

  it.runIf(available)("deletes a device's rows from any address, and with both filters only the device's rows at that address", async () => {
    const { site, ids } = await siteWithVisitor()
    expect((await erase(site, `?clientIp=${visitor}&device=${otherDevice.toUpperCase()}`)).json()).toEqual({ deleted: 1 })
    expect(await listedIds(site, `?clientIp=${visitor}`)).toEqual([ids.plain, ids.rejected].sort())
    expect((await erase(site, `?device=${device}`, asScript(account))).json()).toEqual({ deleted: 2 })
    expect(await listedIds(site)).toEqual([ids.rejected, ids.longer, ids.ipv6].sort())
  })

  it.runIf(available)('refuses a deletion without clientIp or device, deleting nothing', async () => {
    const { site } = await siteWithVisitor()
    for (const query of ['', '?action=allow']) {
      const response = await erase(site, query)
      expect(response.statusCode, response.body).toBe(400)
      expect(response.json().error.code).toBe('validation_error')
    }
    expect(await listedIds(site)).toHaveLength(6)
  })

  it.runIf(available)("records the deletion in the site's audit log with the filters and the count, not the visitor's address or device", async () => {
    const { site } = await siteWithVisitor()
    expect((await erase(site, `?clientIp=${visitor}&device=${device}`)).json()).toEqual({ deleted: 1 })
    const audit = await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?siteId=${site.id}&action=verifications.deleted`, headers: asBrowser(account) })
    expect(audit.statusCode, audit.body).toBe(200)
    const events = audit.json<{ items: AuditEvent[] }>().items
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ action: 'verifications.deleted', site: { id: site.id }, actor: { type: 'session', name: account.email }, details: { filters: ['clientIp', 'device'], count: 1 } })
    expect(audit.body).not.toContain(visitor)
    expect(audit.body).not.toContain(device)
  })
})

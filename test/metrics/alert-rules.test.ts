import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasPromtool, runPromtool } from '../helpers/promtool.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

const directory = join(import.meta.dirname, '..', '..', 'deploy', 'prometheus')
const rulesFile = join(directory, 'tollgate-alerts.yml')

/**
 * The service's own series the rules read, each with the labels the rules select or group it by:
 * `name{label=...}`, and `by (label, ...)` in the same rule.
 */
function selectorsOf(rules: string): { metric: string; labels: string[] }[] {
  const found = new Map<string, Set<string>>()
  for (const rule of rules.split(/^\s*- (?:record|alert):/m).slice(1)) {
    const grouped = [...rule.matchAll(/\bby \(([^)]*)\)/g)].flatMap(([, labels = '']) => labels.split(',').map((label) => label.trim()))
    for (const match of rule.matchAll(/\b(tollgate_[a-z_]+|http_request_duration_seconds_(?:bucket|count))\b(?:\{([^}]*)\})?/g)) {
      const [, metric = '', matchers = ''] = match
      const names = found.get(metric) ?? new Set<string>()
      for (const [, label = ''] of matchers.matchAll(/([a-z_]+)\s*(?:=~|!~|!=|=)/g)) names.add(label)
      for (const label of grouped) names.add(label)
      found.set(metric, names)
    }
  }
  return [...found].map(([metric, labels]) => ({ metric, labels: [...labels] }))
}

describe.skipIf(!hasPromtool)('the Prometheus alerting rules (deploy/prometheus)', () => {
  it('pass promtool check rules, and their unit tests pass promtool test rules', () => {
    const checked = runPromtool(['check', 'rules', 'tollgate-alerts.yml'], { cwd: directory })
    expect(checked.output).toContain('SUCCESS')
    expect(checked.status).toBe(0)
    const tested = runPromtool(['test', 'rules', 'tollgate-alerts.test.yml'], { cwd: directory })
    expect(tested.output).toContain('SUCCESS')
    expect(tested.status).toBe(0)
  })
})

describe('the series the alerting rules read', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp()
  })
  afterAll(() => service.close())

  it('are the ones /metrics serves, with the labels the rules select on', async () => {
    const selectors = selectorsOf(readFileSync(rulesFile, 'utf8'))
    expect(selectors.map(({ metric }) => metric).sort()).toEqual([
      'http_request_duration_seconds_bucket',
      'http_request_duration_seconds_count',
      'tollgate_clock_offset_seconds',
      'tollgate_dependency_up',
      'tollgate_siteverify_total',
      'tollgate_verification_log_buffered_rows',
      'tollgate_verification_log_dropped_rows_total',
      'tollgate_verifications_total',
      'tollgate_webhook_deliveries_total',
    ])
    const exposition = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
    for (const { metric, labels } of selectors) {
      // A histogram's buckets and count are of the histogram's name.
      const name = metric.replace(/_(bucket|count)$/, '')
      expect(exposition, metric).toMatch(new RegExp(`^# TYPE ${name} (counter|gauge|histogram)$`, 'm'))
      const declared = service.app.metrics.registry.getSingleMetric(name) as unknown as { labelNames: string[] } | undefined
      // Labels the scrape adds (job, instance) and the histogram's own (le) aside.
      const own = labels.filter((label) => !['job', 'instance', 'le'].includes(label))
      expect(declared, metric).toBeDefined()
      expect(declared?.labelNames, metric).toEqual(expect.arrayContaining(own))
    }
  })
})

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserHeaders, createTestSite, obtainToken } from '../helpers/core-flow.js'
import { hasPromtool, runPromtool } from '../helpers/promtool.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

const dashboardFile = join(import.meta.dirname, '..', '..', 'deploy', 'grafana', 'tollgate-dashboard.json')

interface GridPos {
  x: number
  y: number
  w: number
  h: number
}

interface Panel {
  id: number
  type: string
  title: string
  gridPos: GridPos
  datasource?: { type: string; uid: string }
  targets?: { refId: string; expr: string; datasource?: { type: string; uid: string } }[]
  panels?: Panel[]
}

interface Variable {
  name: string
  type: string
  query: string | { query: string }
}

interface Dashboard {
  schemaVersion: number
  uid: string
  panels: Panel[]
  templating: { list: Variable[] }
}

/** Parsing is part of the test: a file Grafana could not import fails here first. */
const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as Dashboard

/** Every panel, the rows' own and those a collapsed row holds. */
function allPanels(): Panel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])])
}

/** Every PromQL query of the dashboard: the panels' and the variables' label_values() selectors. */
function allQueries(): { where: string; expr: string }[] {
  const panels = allPanels().flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: `${panel.title} (${target.refId})`, expr: target.expr })))
  const variables = dashboard.templating.list.flatMap((variable) => {
    if (variable.type !== 'query') return []
    const query = typeof variable.query === 'string' ? variable.query : variable.query.query
    const [, selector = '', label = ''] = /^label_values\((.*),\s*([a-zA-Z_]\w*)\)$/.exec(query) ?? []
    // The variable's label, grouped by as a panel would, so that it is checked on the selector's metric.
    return [{ where: `variable ${variable.name}`, expr: `count by (${label}) (${selector})` }]
  })
  return [...panels, ...variables]
}

/** An expression as Grafana hands it to Prometheus: every job and instance, a 5-minute window. */
function asSent(expr: string): string {
  return expr
    .replaceAll('$__rate_interval', '5m')
    .replaceAll('$__interval', '1m')
    .replaceAll('$job', '.*')
    .replaceAll('$instance', '.*')
}

const grouping = /\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g
const keywords = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan'])

interface Selector {
  metric: string
  /** The labels its matchers name. */
  matched: string[]
}

/**
 * The series an expression reads, with their matchers' labels, and the labels its `by (...)` /
 * `on (...)` clauses name. Strings, ranges and matcher blocks are skipped as a whole; a name
 * followed by `(` is a function or an aggregation.
 */
function parse(expr: string): { selectors: Selector[]; grouped: string[] } {
  const grouped = [...expr.matchAll(grouping)].flatMap(([, labels = '']) =>
    labels
      .split(',')
      .map((label) => label.trim())
      .filter((label) => label !== ''),
  )
  const rest = expr.replace(grouping, ' ')
  const selectors: Selector[] = []
  for (const match of rest.matchAll(/"(?:[^"\\]|\\.)*"|\[[^\]]*\]|\{[^}]*\}|([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\{[^}]*\})?(\s*\()?/g)) {
    const [, name, matchers = '', call] = match
    if (name === undefined || call !== undefined || keywords.has(name)) continue
    const matched = [...matchers.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)].map(([, label = '']) => label)
    selectors.push({ metric: name, matched })
  }
  return { selectors, grouped }
}

/**
 * Series Prometheus makes itself rather than scraping, with their labels: `up` for each target,
 * and ALERTS for the shipped rules' alerts (with their `severity`).
 */
const prometheusSeries: Record<string, string[]> = {
  up: ['job', 'instance'],
  ALERTS: ['alertname', 'alertstate', 'severity', 'job', 'instance'],
}

/** What the scrape declares: each family's type, and the labels seen on each series name. */
function readExposition(text: string): { types: Map<string, string>; labels: Map<string, Set<string>> } {
  const types = new Map<string, string>()
  const labels = new Map<string, Set<string>>()
  for (const line of text.split('\n')) {
    const declared = /^# TYPE (\S+) (\S+)$/.exec(line)
    if (declared !== null) types.set(declared[1] ?? '', declared[2] ?? '')
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? /.exec(line)
    if (sample === null) continue
    const names = labels.get(sample[1] ?? '') ?? new Set<string>()
    for (const [, label = ''] of (sample[2] ?? '').matchAll(/([a-zA-Z_]\w*)="/g)) names.add(label)
    labels.set(sample[1] ?? '', names)
  }
  return { types, labels }
}

/** The family a series name belongs to: itself, or the histogram its _bucket, _sum or _count is of. */
function familyOf(metric: string, types: Map<string, string>): string | undefined {
  if (types.has(metric)) return metric
  const [, base = '', part = ''] = /^(.*)_(bucket|sum|count)$/.exec(metric) ?? []
  const type = types.get(base)
  if (type === 'histogram' || (type === 'summary' && part !== 'bucket')) return base
  return undefined
}

function overlaps(a: GridPos, b: GridPos): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
}

describe('the Grafana dashboard (deploy/grafana/tollgate-dashboard.json)', () => {
  it('is a Grafana 10/11 dashboard with a Prometheus data source variable and job and instance variables every query uses', () => {
    // 37 is Grafana 10.0's schema, 41 Grafana 11.3's.
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(37)
    expect(dashboard.schemaVersion).toBeLessThanOrEqual(41)
    expect(dashboard.uid).toBe('tollgate')
    const variables = Object.fromEntries(dashboard.templating.list.map((variable) => [variable.name, variable]))
    expect(variables.datasource).toMatchObject({ type: 'datasource', query: 'prometheus' })
    expect(variables.job).toMatchObject({ type: 'query' })
    expect(variables.instance).toMatchObject({ type: 'query' })
    for (const panel of allPanels().filter((panel) => panel.type !== 'row')) {
      expect(panel.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${datasource}' })
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0)
      for (const target of panel.targets ?? []) {
        expect(target.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${datasource}' })
        for (const { metric, matched } of parse(target.expr).selectors) {
          // ALERTS is Prometheus's own, without a target's job and instance.
          if (metric === 'ALERTS') continue
          expect(matched, `${panel.title}: ${metric}`).toEqual(expect.arrayContaining(['job', 'instance']))
        }
      }
    }
  })

  it('has unique panel ids, and panels inside the 24 columns that do not overlap', () => {
    const panels = allPanels()
    const ids = panels.map((panel) => panel.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const panel of panels) {
      expect(panel.gridPos.x, panel.title).toBeGreaterThanOrEqual(0)
      expect(panel.gridPos.w, panel.title).toBeGreaterThan(0)
      expect(panel.gridPos.h, panel.title).toBeGreaterThan(0)
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24)
    }
    for (const [index, panel] of panels.entries()) {
      for (const other of panels.slice(index + 1)) expect(overlaps(panel.gridPos, other.gridPos), `${panel.title} / ${other.title}`).toBe(false)
    }
    expect(panels.filter((panel) => panel.type === 'row').map((row) => row.title)).toEqual([
      'Traffic',
      'Latency',
      'Errors',
      'Dependencies',
      'Webhooks',
      'Surge and alerts',
      'Process',
    ])
  })

  it.skipIf(!hasPromtool)('has queries that are valid PromQL (promtool check rules, each as a recording rule)', () => {
    const rules = allQueries().map(({ expr }, index) => ({ record: `tollgate_dashboard:query_${index}`, expr: asSent(expr) }))
    // JSON is YAML: promtool reads it as is.
    const checked = runPromtool(['check', 'rules', 'rules.yml'], { files: { 'rules.yml': JSON.stringify({ groups: [{ name: 'tollgate-dashboard', rules }] }) } })
    expect(checked.output).toContain(`SUCCESS: ${rules.length} rules found`)
    expect(checked.status).toBe(0)
  })

  /**
   * Two instances of one job, as Prometheus scrapes them: the fleet's counters reported alike by
   * both (instance b restarted from the stored totals at 17 minutes, below the 960 it had reported),
   * each instance's own requests and gauges.
   */
  const fleet = {
    'tollgate_challenges_issued_total{job="tollgate", instance="a"}': '0+60x20',
    'tollgate_challenges_issued_total{job="tollgate", instance="b"}': '0+60x20',
    'tollgate_verifications_total{job="tollgate", instance="a", action="allow"}': '0+60x20',
    'tollgate_verifications_total{job="tollgate", instance="b", action="allow"}': '0+60x16 600+60x4',
    ...Object.fromEntries(
      ['a', 'b'].flatMap((instance) => [
        [`tollgate_siteverify_total{job="tollgate", instance="${instance}", result="success"}`, '0+60x20'],
        [`tollgate_siteverify_total{job="tollgate", instance="${instance}", result="internal-error"}`, '0+20x20'],
        [`tollgate_siteverify_total{job="tollgate", instance="${instance}", result="missing-input-secret"}`, '0+20x20'],
        [`tollgate_siteverify_total{job="tollgate", instance="${instance}", result="test"}`, '0+500x20'],
        [`tollgate_webhook_deliveries_total{job="tollgate", instance="${instance}", outcome="delivered"}`, '0+45x20'],
        [`tollgate_webhook_deliveries_total{job="tollgate", instance="${instance}", outcome="timeout"}`, '0+15x20'],
      ]),
    ),
    'http_request_duration_seconds_count{job="tollgate", instance="a", route="/api/v1/challenge", method="POST", status_code="200"}': '0+60x20',
    'http_request_duration_seconds_count{job="tollgate", instance="b", route="/api/v1/challenge", method="POST", status_code="200"}': '0+120x20',
    'tollgate_dependency_up{job="tollgate", instance="a", dependency="postgresql"}': '1x20',
    'tollgate_dependency_up{job="tollgate", instance="b", dependency="postgresql"}': '0x20',
    'tollgate_dependency_up{job="tollgate", instance="a", dependency="redis"}': '1x20',
    'tollgate_dependency_up{job="tollgate", instance="b", dependency="redis"}': '1x20',
  }

  /** What each panel's first query shows of those series at 20 minutes. */
  const expectations: Record<string, { labels: string; value: number }[]> = {
    // Once, not once per instance.
    'Challenges issued': [{ labels: '{job="tollgate"}', value: 1 }],
    // b's window holds its restart, which would read as 600 new counts: a's rate stands in.
    'Verifications by action': [{ labels: '{job="tollgate", action="allow"}', value: 1 }],
    // Test calls and calls without a secret left out: 20 of 80.
    'Siteverify: share of internal-error': [{ labels: '{job="tollgate"}', value: 0.25 }],
    'Webhook deliveries: share not delivered': [{ labels: '{job="tollgate"}', value: 0.25 }],
    // Each instance's own: 1 + 2 a second.
    'HTTP requests by route': [{ labels: '{job="tollgate", route="/api/v1/challenge"}', value: 3 }],
    // One instance without its database is the fleet's 0.
    'Dependencies up (fleet)': [
      { labels: '{job="tollgate", dependency="postgresql"}', value: 0 },
      { labels: '{job="tollgate", dependency="redis"}', value: 1 },
    ],
  }

  it.skipIf(!hasPromtool)('shows the fleet\'s figures once however many instances report them (promtool test rules)', () => {
    const panels = allPanels()
    const tests = Object.entries(expectations).map(([title, expected]) => {
      const expr = panels.find((panel) => panel.title === title)?.targets?.[0]?.expr
      expect(expr, title).toBeDefined()
      return { expr: asSent(expr ?? ''), eval_time: '20m', exp_samples: expected }
    })
    const series = Object.entries(fleet).map(([name, values]) => ({ series: name, values }))
    const tested = runPromtool(['test', 'rules', 'tests.yml'], { files: { 'tests.yml': JSON.stringify({ evaluation_interval: '1m', tests: [{ interval: '1m', input_series: series, promql_expr_test: tests }] }) } })
    expect(tested.output).toContain('SUCCESS')
    expect(tested.status).toBe(0)
  })

  describe('against a running service', () => {
    let service: TestApp
    let exposition: string
    beforeAll(async () => {
      service = await buildTestApp()
      // One challenge, verify and Siteverify, so that their series carry samples.
      const site = await createTestSite(service.app)
      const response = await obtainToken(service.app, browserHeaders(site.siteKey))
      const verified = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response } })
      expect(verified.json()).toMatchObject({ success: true })
      exposition = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
    }, 120_000)
    afterAll(() => service?.close())

    it('reads only series /metrics serves, with labels they carry', () => {
      const { types, labels } = readExposition(exposition)
      for (const { where, expr } of allQueries()) {
        const { selectors, grouped } = parse(expr)
        expect(selectors.length, where).toBeGreaterThan(0)
        for (const { metric, matched } of selectors) {
          const family = familyOf(metric, types)
          const known = prometheusSeries[metric]
          expect(family !== undefined || known !== undefined, `${where}: ${metric} is not in the scrape`).toBe(true)
          const declared = family === undefined ? [] : ((service.app.metrics.registry.getSingleMetric(family) as unknown as { labelNames?: string[] } | undefined)?.labelNames ?? [])
          const carried = new Set([...(known ?? []), ...declared, ...(labels.get(metric) ?? []), 'job', 'instance'])
          // `le` groups a histogram's buckets, and only them.
          const needed = [...matched, ...grouped.filter((label) => label !== 'le' || metric.endsWith('_bucket'))]
          for (const label of needed) expect(carried.has(label), `${where}: ${metric} has no label ${label}`).toBe(true)
        }
        // Grouping by le is for histogram_quantile over a histogram's buckets.
        if (grouped.includes('le')) expect(selectors.every(({ metric }) => metric.endsWith('_bucket')), where).toBe(true)
      }
    })

    it('aggregates across instances without counting twice: max over the fleet\'s counters, never a sum of gauges', () => {
      const { types } = readExposition(exposition)
      const gauges = [...types].filter(([, type]) => type === 'gauge').map(([name]) => name)
      for (const { where, expr } of allQueries()) {
        // Every instance reports the fleet's totals of the tollgate_* counters (README, "Metrics").
        for (const match of expr.matchAll(/\b(?:rate|increase)\((tollgate_\w+_total)\b/g)) {
          expect(expr.slice(0, match.index), `${where}: ${match[1]}`).toMatch(/max by \([^)]*\) \($/)
        }
        // Each instance's own gauges are shown per instance, or by min/max: a sum adds up states.
        for (const gauge of gauges) expect(expr, where).not.toMatch(new RegExp(`\\bsum\\b(?:\\s*by\\s*\\([^)]*\\))?\\s*\\(\\s*${gauge}\\b`))
      }
    })

    it('selects route patterns that the service\'s own routes carry', () => {
      const routes = [...exposition.matchAll(/^http_request_duration_seconds_count\{[^}]*route="([^"]*)"/gm)].map(([, route = '']) => route)
      for (const route of ['/api/v1/challenge', '/api/v1/verify', '/api/v1/siteverify']) expect(routes).toContain(route)
      for (const { where, expr } of allQueries()) {
        for (const [, pattern = ''] of expr.matchAll(/\broute=~"([^"]*)"/g)) {
          // Prometheus anchors a regular expression matcher at both ends.
          const anchored = new RegExp(`^(?:${pattern.replaceAll('\\\\', '\\')})$`)
          expect(routes.some((route) => anchored.test(route)), `${where}: ${pattern}`).toBe(true)
        }
      }
    })
  })
})

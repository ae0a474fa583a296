import { useCallback, useState } from 'preact/hooks'
import { fetchStats, fetchSurge } from '../../api/analytics.js'
import { describeError } from '../../api/client.js'
import { verificationActions, type Site, type Stats, type SurgeStatus } from '../../api/types.js'
import { ErrorNotice, Loading, Notice } from '../../components/notice.js'
import { RangePicker } from '../../components/range-picker.js'
import { RankedList } from '../../components/ranked-list.js'
import { VerificationsChart } from '../../components/verifications-chart.js'
import { actionStyles } from '../../lib/actions.js'
import { formatCountry, formatDateTime, formatNumber, formatPercent, formatRankedValue } from '../../lib/format.js'
import { useAddressParam } from '../../lib/router.js'
import { canChangeSite } from '../../lib/site-access.js'
import { queryOfRange, rangeLabels, rangeNames, type RangeName } from '../../lib/time-range.js'
import { useLoader } from '../../lib/use-loader.js'
import { BucketsTable } from './buckets-table.js'
import { FeedbackCard } from './feedback-card.js'
import { ScoreDistribution } from './score-distribution.js'
import { SiteverifyCard } from './siteverify-card.js'
import { BusyButton } from '../../components/busy-button.js'

export function AnalyticsPanel({ site }: { site: Site }) {
  const [range, setRange] = useAddressParam<RangeName>('range', rangeNames, '24h')
  // The numbers carry the range they were counted for: while another range loads, they are still
  // on screen, and must not be named by the range just picked.
  // The surge is read beside the numbers (and again with them on Refresh), only while protection
  // is on; it comes from Redis, the numbers from the database: one failing leaves the other.
  const isSurgeProtected = site.settings.surgeChallengesPerMinute > 0
  const load = useCallback(async () => {
    const [stats, surge] = await Promise.all([
      fetchStats(site.id, queryOfRange(range)),
      isSurgeProtected ? fetchSurge(site.id).catch((error: unknown) => ({ error })) : undefined,
    ])
    return { range, stats, surge }
  }, [site.id, range, isSurgeProtected])
  const [loaded, , refresh] = useLoader(load, `${site.id}:${range}`)
  // A range picked reloads the numbers below the radio buttons, out of a screen reader's sight:
  // said once they are in. Not on arrival, where the page's heading says where one is.
  const [isRangePicked, setRangePicked] = useState(false)
  const shownRange = isRangePicked && loaded.status === 'ready' && loaded.data.range === range ? `Showing the ${rangeLabels[range].toLowerCase()}.` : ''
  return (
    <>
      <div class="toolbar">
        <RangePicker
          value={range}
          onChange={(picked) => {
            setRangePicked(true)
            setRange(picked)
          }}
        />
        <BusyButton type="button" class="button button--small" onClick={refresh} isBusy={loaded.status === 'loading'}>
          Refresh
        </BusyButton>
        {loaded.status === 'loading' && loaded.data !== undefined ? <Loading label={`Loading ${rangeLabels[range].toLowerCase()}…`} /> : null}
      </div>
      <p role="status" class="visually-hidden">
        {shownRange}
      </p>
      {loaded.status === 'error' ? <ErrorNotice error={loaded.error} /> : null}
      {loaded.data?.surge === undefined ? null : <SurgeNow surge={loaded.data.surge} />}
      {loaded.data === undefined ? (
        loaded.status === 'loading' ? <Loading /> : null
      ) : (
        <StatsView stats={loaded.data.stats} range={loaded.data.range} site={site} isLoading={loaded.status === 'loading'} />
      )}
    </>
  )
}

/** The site's challenge rate now against its surge threshold, and the surge going on, if any. */
function SurgeNow({ surge }: { surge: SurgeStatus | { error: unknown } }) {
  if ('error' in surge) return <p class="muted">The surge's state cannot be read now ({describeError(surge.error)}).</p>
  const { challengesPerMinute, threshold, extraBits } = surge
  const rate = `${formatNumber(challengesPerMinute)} ${challengesPerMinute === 1 ? 'challenge' : 'challenges'} in the last minute (surge threshold ${formatNumber(threshold)})`
  const harder = extraBits > 0 ? `: every challenge is ${extraBits === 1 ? '1 bit' : `${extraBits} bits`} harder.` : '.'
  if (surge.startedAt === null) return <p class="muted">{rate}{harder}</p>
  return (
    <Notice tone="warning">
      <strong>In a surge since {formatDateTime(surge.startedAt)}.</strong> {rate}
      {extraBits > 0 ? harder : '; it ends once the rate has stayed under the threshold for 3 minutes.'}
    </Notice>
  )
}

function StatsView({ stats, range, site, isLoading }: { stats: Stats; range: RangeName; site: Site; isLoading: boolean }) {
  const { totals } = stats
  return (
    <div class="stats" aria-busy={isLoading}>
      <ul class="totals" aria-label={`Totals, ${rangeLabels[range].toLowerCase()}`}>
        <li class="totals__item" data-action="total">
          <span class="totals__label">Verifications</span>
          <span class="totals__value">{formatNumber(totals.total)}</span>
        </li>
        {verificationActions.map((action) => (
          <li key={action} class={`totals__item totals__item--${action}`} data-action={action}>
            <span class="totals__label">{actionStyles[action].label}</span>
            <span class="totals__value">{formatNumber(totals[action])}</span>
            <span class="totals__share">{formatPercent(totals[action], totals.total)}</span>
          </li>
        ))}
      </ul>
      <section class="card" aria-labelledby="chart-heading">
        <h2 id="chart-heading">Verifications over time</h2>
        <VerificationsChart series={stats.series} interval={stats.interval} />
        <details class="details">
          <summary>Show the numbers as a table</summary>
          <BucketsTable series={stats.series} interval={stats.interval} />
        </details>
      </section>
      <div class="columns">
        <ScoreDistribution
          buckets={stats.scoreDistribution}
          challengeThreshold={site.settings.challengeThreshold}
          blockThreshold={site.settings.blockThreshold}
          labeled={stats.feedback.buckets}
        />
        <RankedList
          id="hostnames-heading"
          title="Top hostnames"
          items={stats.topHostnames.map(({ hostname, count }) => ({ label: hostname, count }))}
          // Beyond an hour's 100 new hostnames (besides the hour before's 100 most counted), the rest
          // are counted together (a flood of made-up subdomains).
          formatLabel={(hostname) => formatRankedValue(hostname, 'Other hostnames')}
          // Scripts and other clients that send neither Origin nor Referer are logged without one;
          // rejected submissions' hostnames are not counted (anyone can make them up for free).
          emptyText={
            totals.total - totals.rejected === 0 ? 'No scored verifications in this range.' : 'No hostname is known for the scored verifications in this range.'
          }
          total={totals.total - totals.rejected}
        />
      </div>
      <div class="columns">
        <RankedList
          id="anomalies-heading"
          title="Top anomalies"
          items={stats.topAnomalies}
          emptyText="No anomalies in this range."
          total={totals.total}
        />
        <RankedList
          id="countries-heading"
          title="Top countries"
          items={stats.topCountries.map(({ countryCode, count }) => ({ label: countryCode, count }))}
          // Refused submissions (a wrong nonce, an expired challenge) are logged without a country.
          emptyText={totals.total === 0 ? 'No verifications in this range.' : 'No country is known for the verifications in this range.'}
          formatLabel={formatCountry}
          total={totals.total}
        />
      </div>
      <div class="columns">
        <RankedList
          id="page-actions-heading"
          title="Top page actions"
          items={stats.topPageActions.map(({ pageAction, count }) => ({ label: pageAction, count }))}
          formatLabel={(pageAction) => formatRankedValue(pageAction, 'Other actions')}
          // Only pages that give the SDK an action (data-action, execute({ action })) have one.
          emptyText={
            totals.total - totals.rejected === 0
              ? 'No scored verifications in this range.'
              : 'No page action in this range: give the SDK one per form (data-action="login") to see which form is asked most.'
          }
          total={totals.total - totals.rejected}
        />
        <SiteverifyCard siteverify={stats.siteverify} from={stats.from} />
      </div>
      <div class="columns">
        <FeedbackCard feedback={stats.feedback} canLabel={canChangeSite(site)} />
      </div>
    </div>
  )
}

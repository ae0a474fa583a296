import { Fragment } from 'preact'
import type { FeedbackFigures, ScoreBucket, VerificationAction } from '../../api/types.js'
import { RankedHead, RankedRow } from '../../components/ranked-list.js'
import { actionStyles } from '../../lib/actions.js'
import { formatNumber, formatPercent } from '../../lib/format.js'

interface ScoreDistributionProps {
  buckets: readonly ScoreBucket[]
  challengeThreshold: number
  blockThreshold: number
  /** The labels by score, in the same buckets: shown as two more columns once some verification has one. */
  labeled?: FeedbackFigures['buckets']
}

interface Threshold {
  name: string
  score: number
}

/** Which action a bucket's lowest score gets from the thresholds alone (the bar's colour, decoration only). */
function zoneOf(score: number, challengeThreshold: number, blockThreshold: number): VerificationAction {
  if (score >= blockThreshold) return 'block'
  return score >= challengeThreshold ? 'challenge' : 'allow'
}

/**
 * How many scored verifications reached a threshold: exact when it is a bucket's lowest score,
 * else between the buckets above it and those plus the one it falls in (the counts are per ten).
 */
function reaching(buckets: readonly ScoreBucket[], threshold: number): { atLeast: number; atMost: number } {
  let atLeast = 0
  let atMost = 0
  for (const { min, max, count } of buckets) {
    if (min >= threshold) atLeast += count
    if (max >= threshold) atMost += count
  }
  return { atLeast, atMost }
}

const rangeOf = ({ min, max }: ScoreBucket) => `${min}–${max}`

/**
 * The scored verifications by risk score, with the site's thresholds marked between the buckets
 * and what each catches in words, so that an operator tuning them sees how many verifications a
 * threshold takes and how many a move would. A table: the numbers are text, the bars decoration.
 */
export function ScoreDistribution({ buckets, challengeThreshold, blockThreshold, labeled = [] }: ScoreDistributionProps) {
  const scored = buckets.reduce((sum, bucket) => sum + bucket.count, 0)
  const max = buckets.reduce((largest, bucket) => Math.max(largest, bucket.count), 0)
  const thresholds: Threshold[] = [
    { name: 'Challenge threshold', score: challengeThreshold },
    { name: 'Block threshold', score: blockThreshold },
  ]
  // A threshold is drawn above the bucket it falls in: at its top when it is the bucket's lowest score.
  const thresholdsIn = (bucket: ScoreBucket) => thresholds.filter(({ score }) => score >= bucket.min && score <= bucket.max)
  const hasLabels = labeled.some((bucket) => bucket.legitimate + bucket.fraudulent > 0)
  const labelsOf = (bucket: ScoreBucket) => {
    const found = labeled.find(({ min }) => min === bucket.min)
    return [found?.legitimate ?? 0, found?.fraudulent ?? 0]
  }
  return (
    <section class="card" aria-labelledby="scores-heading">
      <h2 id="scores-heading">Risk scores</h2>
      {scored === 0 ? (
        <p class="muted">No scored verifications in this range.</p>
      ) : (
        <>
          <table class="table ranked scores">
            <RankedHead name="Score" share="Of scored" {...(hasLabels ? { extraColumns: ['Labeled legitimate', 'Labeled fraudulent'] } : {})} />
            <tbody>
              {buckets.map((bucket) => (
                <Fragment key={bucket.min}>
                  {thresholdsIn(bucket).map(({ name, score }) => (
                    <tr key={name} class="scores__threshold">
                      <td colSpan={hasLabels ? 5 : 3}>
                        {name}: {score}
                        {score === bucket.min ? '' : ` (within ${rangeOf(bucket)})`}
                      </td>
                    </tr>
                  ))}
                  <RankedRow
                    data-min={bucket.min}
                    label={rangeOf(bucket)}
                    count={bucket.count}
                    max={max}
                    total={scored}
                    barColor={actionStyles[zoneOf(bucket.min, challengeThreshold, blockThreshold)].color}
                    {...(hasLabels ? { extraCounts: labelsOf(bucket) } : {})}
                  />
                </Fragment>
              ))}
            </tbody>
          </table>
          <ul class="scores__caught">
            {thresholds.map(({ name, score }) => {
              const { atLeast, atMost } = reaching(buckets, score)
              const [counted, share] =
                atLeast === atMost
                  ? [formatNumber(atLeast), formatPercent(atLeast, scored)]
                  : [`between ${formatNumber(atLeast)} and ${formatNumber(atMost)}`, `${formatPercent(atLeast, scored)} to ${formatPercent(atMost, scored)}`]
              return (
                <li key={name}>
                  <strong>
                    {name} ({score}):
                  </strong>{' '}
                  {counted} of {formatNumber(scored)} scored verifications ({share}) reach it.
                </li>
              )
            })}
          </ul>
          <p class="muted">
            The thresholds are the site's settings now: a verification was judged by those of its time. Between the two, a
            visitor who has had the most step-ups is allowed or blocked instead, at the middle of the band. Rejected
            submissions have no score.
          </p>
        </>
      )}
    </section>
  )
}

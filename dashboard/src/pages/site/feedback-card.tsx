import type { FeedbackFigures } from '../../api/types.js'
import { formatNumber } from '../../lib/format.js'

interface FeedbackCardProps {
  feedback: FeedbackFigures
  /** Whether the one reading may label verifications (not a viewer): only then is it told to. */
  canLabel: boolean
}

/**
 * What the site's backend (Siteverify feedback) and its operators said of the range's
 * verifications, against what each was answered then (the action logged): the fraud let through
 * and the people stopped. Those counts stay as they are when the thresholds change; where to move
 * the thresholds is read from the score buckets' labeled columns. What the site's own lists decided
 * is the lists' doing, not the model's: shown apart, as what to review in those lists.
 */
export function FeedbackCard({ feedback, canLabel }: FeedbackCardProps) {
  const { legitimate, fraudulent, missed, falseAlarms, byList } = feedback
  const figures = [
    { key: 'legitimate', label: 'Legitimate', count: legitimate },
    { key: 'fraudulent', label: 'Fraudulent', count: fraudulent },
    { key: 'missed', label: 'Missed (fraudulent, allowed)', count: missed },
    { key: 'false-alarms', label: 'False alarms (legitimate, challenged or blocked)', count: falseAlarms },
  ]
  // What the site's lists got wrong, shown once there is some: a site without lists, or whose lists
  // only let in people and turned away frauds, is not shown two zeros about them.
  // An instance older than migration 030 (a rolling upgrade) answers no byList: nothing to show.
  const listMistakes = [
    { key: 'allowlist-fraudulent', label: 'Fraudulent, let in by your allowlist', count: byList?.allowlist.fraudulent ?? 0 },
    { key: 'blocklist-legitimate', label: 'Legitimate, turned away by your blocklist', count: byList?.blocklist.legitimate ?? 0 },
  ]
  if (listMistakes.some(({ count }) => count > 0)) figures.push(...listMistakes)
  return (
    <section class="card" aria-labelledby="feedback-heading">
      <h2 id="feedback-heading">Feedback</h2>
      {legitimate + fraudulent === 0 ? (
        <p class="muted">
          No labeled verifications in this range. {canLabel ? 'Label verifications in the verification log, or from' : 'Labels come from the verification log, or from'}{' '}
          your server with Siteverify feedback (<code>README.md</code>, "Protecting a site", step 3).
        </p>
      ) : (
        <>
          <dl class="feedback">
            {figures.map(({ key, label, count }) => (
              <div key={key} class="feedback__item" data-feedback={key}>
                <dt>{label}</dt>
                <dd>{formatNumber(count)}</dd>
              </div>
            ))}
          </dl>
          <p class="muted">
            Counted by what each verification was answered then: changing the thresholds does not move these. Those your allowed or blocked
            addresses and countries decided are not the risk model's, so they are neither missed nor false alarms. To tune the thresholds, see
            where the "Labeled fraudulent" and "Labeled legitimate" columns of Risk scores sit against them.
          </p>
        </>
      )}
    </section>
  )
}

import type { FeedbackFigures } from '../../api/types.js'
import { formatNumber } from '../../lib/format.js'

interface FeedbackCardProps {
  feedback: FeedbackFigures
  challengeThreshold: number
}

/**
 * What the site's backend (Siteverify feedback) and its operators said of the range's
 * verifications, against the challenge threshold as it is now: the fraud it lets through and the
 * people it stops, the two numbers that say which way to move it.
 */
export function FeedbackCard({ feedback, challengeThreshold }: FeedbackCardProps) {
  const { legitimate, fraudulent, missed, falseAlarms } = feedback
  const figures = [
    { key: 'legitimate', label: 'Legitimate', count: legitimate },
    { key: 'fraudulent', label: 'Fraudulent', count: fraudulent },
    { key: 'missed', label: `Missed (fraudulent, scored below ${challengeThreshold})`, count: missed },
    { key: 'false-alarms', label: `False alarms (legitimate, scored ${challengeThreshold} or more)`, count: falseAlarms },
  ]
  return (
    <section class="card" aria-labelledby="feedback-heading">
      <h2 id="feedback-heading">Feedback</h2>
      {legitimate + fraudulent === 0 ? (
        <p class="muted">
          No labeled verifications in this range. Label verifications here or from your server with Siteverify feedback (<code>README.md</code>,
          "Protecting a site", step 3).
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
            Many missed: lower the challenge threshold to catch them. Many false alarms: raise it to let them through. Counted
            against the site's thresholds now, not those the verifications were judged by.
          </p>
        </>
      )}
    </section>
  )
}

import { useState } from 'preact/hooks'
import { describeError } from '../../api/client.js'
import { sendTestWebhook } from '../../api/sites.js'
import type { Site, WebhookDelivery, WebhookEvent } from '../../api/types.js'
import { Notice } from '../../components/notice.js'
import { outcomeLabels, webhookEventChoices } from '../../lib/delivery-outcomes.js'
import { BusyButton } from '../../components/busy-button.js'

interface TestWebhookProps {
  site: Site
  onSent: () => void
}

type Outcome = { status: 'idle' } | { status: 'sending' } | { status: 'done'; delivery: WebhookDelivery } | { status: 'failed'; error: unknown }

export function TestWebhook({ site, onSent }: TestWebhookProps) {
  const [outcome, setOutcome] = useState<Outcome>({ status: 'idle' })
  const [event, setEvent] = useState<WebhookEvent>('verification.blocked')
  const hasWebhook = site.settings.webhookUrl !== null && site.settings.webhookUrl !== ''
  const send = async () => {
    setOutcome({ status: 'sending' })
    try {
      setOutcome({ status: 'done', delivery: await sendTestWebhook(site.id, event) })
    } catch (error) {
      setOutcome({ status: 'failed', error })
    }
    onSent()
  }
  return (
    <section class="card" aria-labelledby="test-webhook-heading">
      <h2 id="test-webhook-heading">Send a test event</h2>
      <p class="muted">
        Sends a signed sample of an event, marked <code>"test": true</code>, to the webhook now (whichever events it is
        set to receive) and shows what your server answered.
      </p>
      <div class="toolbar">
        <label for="test-webhook-event" class="toolbar__label">
          Event
        </label>
        <select id="test-webhook-event" value={event} onChange={(change) => setEvent(change.currentTarget.value as WebhookEvent)}>
          {webhookEventChoices.map((choice) => (
            <option key={choice.event} value={choice.event}>
              {choice.event}
            </option>
          ))}
        </select>
        <BusyButton type="button" class="button" onClick={() => void send()} isDisabled={!hasWebhook} isBusy={outcome.status === 'sending'}>
          {outcome.status === 'sending' ? 'Sending…' : 'Send test event'}
        </BusyButton>
      </div>
      {hasWebhook ? null : <p class="field__hint">Save a webhook URL and secret first.</p>}
      {/* Always in the page, so that what comes into it is announced; the notices in it are no live regions of their own. */}
      <div class="test-outcome" aria-live="polite">
        {outcome.status === 'done' ? <SendOutcome delivery={outcome.delivery} /> : null}
        {outcome.status === 'failed' ? (
          <Notice tone="error" isInLiveRegion>
            {describeError(outcome.error)}
          </Notice>
        ) : null}
      </div>
    </section>
  )
}

/** What a send (a test event, a resend) came to, for a live region: `action` names the send. */
export function SendOutcome({ delivery, action = '' }: { delivery: WebhookDelivery; action?: string }) {
  const facts = [delivery.statusCode === null ? 'no HTTP answer' : `HTTP ${delivery.statusCode}`, `${delivery.latencyMs} ms`].join(', ')
  return delivery.outcome === 'delivered' ? (
    <Notice tone="success" isInLiveRegion>
      {action}Delivered: {facts} (<code>{delivery.event}</code>).
    </Notice>
  ) : (
    <Notice tone="error" isInLiveRegion>
      {action}
      {outcomeLabels[delivery.outcome]} (<code>{delivery.event}</code>): {facts}
      {delivery.error === null ? '.' : ` — ${delivery.error}`}
    </Notice>
  )
}

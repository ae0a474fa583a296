import { useCallback, useRef, useState } from 'preact/hooks'
import { listWebhookDeliveries, updateSite } from '../../api/sites.js'
import type { Site, WebhookEvent } from '../../api/types.js'
import { ConfirmDialog, focusAfterDialog } from '../../components/confirm-dialog.js'
import { CopyButton } from '../../components/copy-button.js'
import { Field } from '../../components/field.js'
import { FormOutcome } from '../../components/notice.js'
import { webhookEventChoices } from '../../lib/delivery-outcomes.js'
import { generateSecret } from '../../lib/random-secret.js'
import { formatDateTime } from '../../lib/format.js'
import { fieldLabelOf } from '../../lib/site-fields.js'
import { useFormSubmit } from '../../lib/use-form-submit.js'
import { useLoader } from '../../lib/use-loader.js'
import { DeliveriesTable } from './deliveries-table.js'
import { TestWebhook } from './test-webhook.js'
import { Form } from '../../components/form.js'
import { BusyButton } from '../../components/busy-button.js'
import { canChangeSite } from '../../lib/site-access.js'

interface WebhookPanelProps {
  site: Site
  onSaved: () => void
}

export function WebhookPanel({ site, onSaved }: WebhookPanelProps) {
  const loadDeliveries = useCallback(() => listWebhookDeliveries(site.id), [site.id])
  const [deliveries, reloadDeliveries] = useLoader(loadDeliveries, site.id)
  return (
    <>
      <WebhookForm site={site} onSaved={onSaved} />
      {/* Keyed by the URL: a saved new URL clears the previous one's test result. A test event is a change (a delivery), not for viewers. */}
      {canChangeSite(site) ? <TestWebhook key={site.settings.webhookUrl ?? ''} site={site} onSent={reloadDeliveries} /> : null}
      <section class="card" aria-labelledby="deliveries-heading">
        <div class="card__heading">
          <h2 id="deliveries-heading">Recent deliveries</h2>
          <button type="button" class="button button--small" onClick={reloadDeliveries}>
            Refresh
          </button>
        </div>
        <DeliveriesTable siteId={site.id} deliveries={deliveries} />
      </section>
    </>
  )
}

function WebhookForm({ site, onSaved }: WebhookPanelProps) {
  const [url, setUrl] = useState(site.settings.webhookUrl ?? '')
  const [secret, setSecret] = useState('')
  const [events, setEvents] = useState<WebhookEvent[]>(site.settings.webhookEvents)
  const [isSecretVisible, setSecretVisible] = useState(false)
  const [isRemoving, setRemoving] = useState(false)
  // Generate fills the field and adds a Copy button, while the focus stays on Generate: said politely.
  const [secretStatus, setSecretStatus] = useState('')
  const heading = useRef<HTMLHeadingElement>(null)
  const [state, run] = useFormSubmit(['settings.webhookUrl', 'settings.webhookSecret'])
  const isSecretSet = site.settings.webhookSecretSet
  const hasWebhook = site.settings.webhookUrl !== null && site.settings.webhookUrl !== ''

  const save = () =>
    run(async () => {
      const trimmedUrl = url.trim()
      // The URL only when changed: clearing it clears the secret, which may have been saved before the URL.
      // The secret is write-only: an empty field keeps the stored one.
      const stored = await updateSite(site.id, {
        settings: {
          ...(trimmedUrl === (site.settings.webhookUrl ?? '') ? {} : { webhookUrl: trimmedUrl === '' ? null : trimmedUrl }),
          webhookEvents: events,
          ...(secret === '' ? {} : { webhookSecret: secret }),
        },
      })
      // The URL as stored (normalized: a host in lower case), which later deliveries go to.
      setUrl(stored.settings.webhookUrl ?? '')
      setEvents(stored.settings.webhookEvents)
      setSecret('')
      setSecretStatus('')
      setSecretVisible(false)
      onSaved()
      return 'Webhook saved.'
    })

  const remove = async () => {
    await run(async () => {
      await updateSite(site.id, { settings: { webhookUrl: null, webhookSecret: null } })
      setUrl('')
      setSecret('')
      setSecretStatus('')
      onSaved()
      // The Remove webhook button that opened the dialog goes once the site reloads without a webhook.
      focusAfterDialog(heading)
      return 'Webhook removed.'
    })
    // Closed whatever the outcome: a failure's message is drawn on the page, which the modal covers.
    setRemoving(false)
  }

  return (
    <section class="card" aria-labelledby="webhook-heading">
      <h2 id="webhook-heading" ref={heading} tabIndex={-1}>
        Webhook
      </h2>
      <p class="muted">
        Tollgate posts a signed event to this address for each kind of event you choose below: when a verification is
        blocked, and when a surge of the site's traffic begins and ends. Check the <code>X-Service-Signature</code> header (HMAC-SHA256 of the body
        with your secret), or the Standard Webhooks headers (<code>webhook-id</code>, <code>webhook-timestamp</code>,{' '}
        <code>webhook-signature</code>) with a Standard Webhooks library. A new secret replaces the old one, which keeps
        signing beside it in <code>webhook-signature</code> for 24 hours, so that your receiver can move to it without failed deliveries.
      </p>
      <FormOutcome state={state} />
      <Form class="form" onSubmit={() => void save()}>
        {/* A viewer sees the URL and the events chosen, disabled (the page says why once). */}
        <fieldset class="fieldset--plain" disabled={!canChangeSite(site)} aria-describedby={canChangeSite(site) ? undefined : 'read-access-note'}>
          {canChangeSite(site) ? (
            <Field id="webhook-url" label={fieldLabelOf('webhookUrl')} error={state.fieldErrors['settings.webhookUrl']} hint="An https address on your server (plain http too where the service allows private addresses: WEBHOOK_ALLOW_PRIVATE, on by default outside production).">
              {(control) => (
                <input {...control} name="webhookUrl" type="url" inputMode="url" autoComplete="off" spellcheck={false} placeholder="https://example.com/hooks/tollgate" value={url} onInput={(event) => setUrl(event.currentTarget.value)} />
              )}
            </Field>
          ) : (
            // The API does not show a viewer the URL (a Slack-style receiver's is a credential), only whether there is one.
            <p class="field" id="webhook-url-status">
              {site.settings.webhookUrlSet ? 'A webhook URL is set (hidden from viewers).' : 'No webhook URL is set.'}
            </p>
          )}
          <Field
            id="webhook-secret"
            label={fieldLabelOf('webhookSecret')}
            error={state.fieldErrors['settings.webhookSecret']}
            badge={
              <span class={isSecretSet ? 'badge badge--ok' : 'badge'} id="webhook-secret-status">
                {isSecretSet ? 'Secret is set' : 'No secret set'}
              </span>
            }
            hint={
              isSecretSet
                ? `The secret is never shown again. Leave the field empty to keep it, or enter a new one to replace it.${
                    site.settings.previousWebhookSecretExpiresAt === null
                      ? ''
                      : ` The secret it replaced also signs until ${formatDateTime(site.settings.previousWebhookSecretExpiresAt)}.`
                  }`
                : 'At least 16 random characters (Generate makes one, in the whsec_ form Standard Webhooks libraries take as it is). Store the same value in your receiver.'
            }
          >
            {(control) => (
              <div class="input-row">
                {/* Shown in clear only after "Generate", so the owner can copy it to the receiver. */}
                <input
                  {...control}
                  {...(isSecretVisible ? { type: 'text' as const } : { type: 'password' as const })}
                  name="webhookSecret"
                  autoComplete="new-password"
                  spellcheck={false}
                  placeholder={isSecretSet ? '•••••••• (unchanged)' : ''}
                  value={secret}
                  onInput={(event) => {
                    setSecret(event.currentTarget.value)
                    setSecretStatus('')
                  }}
                />
                <button
                  type="button"
                  class="button button--small"
                  onClick={() => {
                    setSecret(generateSecret())
                    setSecretVisible(true)
                    setSecretStatus('Signing secret generated.')
                  }}
                >
                  Generate
                </button>
                {secret !== '' && isSecretVisible ? <CopyButton text={secret} what="signing secret" /> : null}
                <span role="status" class="visually-hidden">
                  {secretStatus}
                </span>
              </div>
            )}
          </Field>
          <fieldset class="field choices" aria-describedby="webhook-events-hint">
            <legend>Events to send</legend>
            {webhookEventChoices.map(({ event, label }) => (
              <label class="check" key={event}>
                <input
                  type="checkbox"
                  name="webhookEvents"
                  value={event}
                  checked={events.includes(event)}
                  onChange={(change) => {
                    const isChecked = change.currentTarget.checked
                    setEvents((current) => webhookEventChoices.map((choice) => choice.event).filter((name) => (name === event ? isChecked : current.includes(name))))
                  }}
                />
                <span>
                  <code>{event}</code>: {label}
                </span>
              </label>
            ))}
            <p class="field__hint" id="webhook-events-hint">
              Surge events are sent once for the whole fleet, ahead of blocked verifications waiting to be sent. With none
              chosen, the webhook is kept but sent nothing.
            </p>
        </fieldset>
        <div class="form__actions">
          <BusyButton type="submit" class="button button--primary" isBusy={state.isBusy}>
            {state.isBusy ? 'Saving…' : 'Save webhook'}
          </BusyButton>
          {hasWebhook ? (
            <button type="button" class="button button--danger-outline" onClick={() => setRemoving(true)}>
              Remove webhook
            </button>
          ) : null}
        </div>
        </fieldset>
      </Form>
      <ConfirmDialog
        title="Remove the webhook?"
        confirmLabel="Remove webhook"
        isOpen={isRemoving}
        isBusy={state.isBusy}
        onConfirm={() => void remove()}
        onCancel={() => setRemoving(false)}
      >
        <p>No events will be sent to {site.settings.webhookUrl} any more. The signing secret is deleted too.</p>
      </ConfirmDialog>
    </section>
  )
}

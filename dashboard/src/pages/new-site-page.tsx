import { useRef, useState } from 'preact/hooks'
import { createSite } from '../api/sites.js'
import type { SiteWithSecret } from '../api/types.js'
import { Field } from '../components/field.js'
import { IntegrationKeys } from '../components/integration-keys.js'
import { Link } from '../components/link.js'
import { Notice } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import { replaceAddress } from '../lib/router.js'
import { parseListEntries } from '../lib/snippet.js'
import { useFormSubmit } from '../lib/use-form-submit.js'
import { Form } from '../components/form.js'
import { BusyButton } from '../components/busy-button.js'

export function NewSitePage() {
  const [created, setCreated] = useState<SiteWithSecret | undefined>()
  if (created !== undefined) return <SiteCreated site={created} />
  return (
    <NewSiteForm
      onCreated={(site) => {
        setCreated(site)
        // A reload then opens the site's keys (the secret key is shown this once only), not an empty form.
        replaceAddress({ name: 'site', siteId: site.id, tab: 'integration' })
      }}
    />
  )
}

function NewSiteForm({ onCreated }: { onCreated: (site: SiteWithSecret) => void }) {
  const [name, setName] = useState('')
  const [domains, setDomains] = useState('')
  const [state, run] = useFormSubmit(['name', 'domains'])
  // One Idempotency-Key per site asked for: sent again with the same name and domains (its answer
  // lost to the network, say), the request answers the site it created instead of a second one.
  const lastAsked = useRef<{ body: string; key: string } | undefined>(undefined)

  const submit = () =>
    run(async () => {
      const input = { name: name.trim(), domains: parseListEntries(domains) }
      const body = JSON.stringify(input)
      if (lastAsked.current?.body !== body) lastAsked.current = { body, key: newIdempotencyKey() }
      onCreated(await createSite(input, lastAsked.current.key))
      return 'The site was created.'
    })

  return (
    <>
      <PageHeading title="Add a site" />
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      <Form class="card form" onSubmit={() => void submit()}>
        <Field id="site-name" label="Name" error={state.fieldErrors.name} hint="For you only, for example “Shop (production)”.">
          {(control) => <input {...control} name="name" required maxLength={100} value={name} onInput={(event) => setName(event.currentTarget.value)} />}
        </Field>
        <Field
          id="site-domains"
          label="Allowed domains"
          error={state.fieldErrors.domains}
          hint="Hostnames allowed to use the site key, one per line; each allows its subdomains too (example.com allows www.example.com). Leave empty to allow any while you develop."
        >
          {(control) => (
            <textarea {...control} name="domains" rows={3} spellcheck={false} autoCapitalize="none" value={domains} onInput={(event) => setDomains(event.currentTarget.value)} />
          )}
        </Field>
        <div class="form__actions">
          <BusyButton type="submit" class="button button--primary" isBusy={state.isBusy}>
            {state.isBusy ? 'Creating…' : 'Create site'}
          </BusyButton>
          <Link to={{ name: 'sites' }} class="button">
            Cancel
          </Link>
        </div>
      </Form>
    </>
  )
}

function SiteCreated({ site }: { site: SiteWithSecret }) {
  return (
    <>
      {/* The form and its Create site button are gone: the keyboard goes on from the new heading. */}
      <PageHeading title={`${site.name} is ready`} takesFocus="always" />
      <Notice tone="success">The site was created. Copy its keys and snippet below.</Notice>
      <section class="card" aria-labelledby="keys-heading">
        <h2 id="keys-heading">Keys and snippet</h2>
        <IntegrationKeys siteKey={site.siteKey} secretKey={site.secretKey} />
      </section>
      <p class="form__actions">
        <Link to={{ name: 'site', siteId: site.id, tab: 'settings' }} class="button button--primary">
          Continue to settings
        </Link>
        <Link to={{ name: 'site', siteId: site.id, tab: 'analytics' }} class="button">
          Open the site
        </Link>
      </p>
    </>
  )
}

/** 128 random bits in hex (crypto.randomUUID needs a secure context; a dashboard on plain http has none). */
function newIdempotencyKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('')
}

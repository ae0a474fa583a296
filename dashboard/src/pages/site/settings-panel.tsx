import { useState } from 'preact/hooks'
import { ApiRequestError } from '../../api/client.js'
import { updateSite } from '../../api/sites.js'
import type { Site, SiteUpdate, TokenAddressCheck } from '../../api/types.js'
import { Field } from '../../components/field.js'
import { FormOutcome } from '../../components/notice.js'
import { fieldLabelOf } from '../../lib/site-fields.js'
import { parseListEntries } from '../../lib/snippet.js'
import { useFormSubmit } from '../../lib/use-form-submit.js'
import { Form } from '../../components/form.js'
import { BusyButton } from '../../components/busy-button.js'
import { canChangeSite } from '../../lib/site-access.js'

type NumberSetting = 'difficulty' | 'challengeLifetimeSeconds' | 'challengeThreshold' | 'blockThreshold' | 'maxStepUps' | 'surgeChallengesPerMinute'

const numberSettings: { key: NumberSetting; hint: string; min: number; max: number }[] = [
  { key: 'difficulty', hint: 'Leading zero bits the proof of work needs (1–32); each step doubles the work. The service raises it for suspicious clients.', min: 1, max: 32 },
  { key: 'challengeLifetimeSeconds', hint: 'How long a visitor has to solve a challenge (10–3600).', min: 10, max: 3600 },
  { key: 'challengeThreshold', hint: 'Risk scores (0–100) from this value on get a harder challenge instead of a token. Must be below the block threshold.', min: 0, max: 100 },
  { key: 'blockThreshold', hint: 'Risk scores (0–100) from this value on are blocked (and sent to the webhook, if it takes blocked verifications).', min: 0, max: 100 },
  { key: 'maxStepUps', hint: 'Harder challenges (0–5) a visitor may solve before the outcome is allow or block.', min: 0, max: 5 },
  {
    key: 'surgeChallengesPerMinute',
    hint: 'While the whole site issues more challenges a minute than this, every visitor gets a harder challenge: one bit more, and one more each time the rate doubles (at most 4). 0 turns it off.',
    min: 0,
    max: 10_000_000,
  },
]

/** The settings that are lists of entries, one per line in their textarea; each replaces the stored list. */
type ListSetting = 'allowedAddresses' | 'blockedAddresses' | 'blockedCountries'

const listSettings: { key: ListSetting; hint: string; rows: number }[] = [
  {
    key: 'allowedAddresses',
    hint: "One IP address or range per line (203.0.113.7, 203.0.113.0/24, 2001:db8::/48): your office, an uptime monitor, a partner's servers. Their verifications are allowed at risk score 0 without being judged, and their challenges are neither harder nor rate limited.",
    rows: 3,
  },
  {
    key: 'blockedAddresses',
    hint: 'One IP address or range per line (203.0.113.7, 203.0.113.0/24, 2001:db8::/32): a hosting range a flood comes from, say. Their verifications are blocked at risk score 100 and sent to the webhook as any block. An allowed address wins.',
    rows: 3,
  },
  {
    key: 'blockedCountries',
    hint: 'Two-letter country codes (ISO 3166-1: DE, US), one per line or separated by spaces: visitors the IP data places there are blocked at risk score 100. A VPN takes the country of its exit. An allowed address wins.',
    rows: 2,
  },
]

const HELP_URL_HINT =
  "Where a visitor the gate turns away can ask for help: an https page or a mailto: address, linked from the gate's page with the verification's reference. " +
  'It must be outside the gate (another host, or a path the proxy does not check), or the gate turns the visitor away there too. Empty: no link.'

const addressChecks: { value: TokenAddressCheck; label: string }[] = [
  { value: 'off', label: 'Off' },
  { value: 'report', label: 'Report: Siteverify says whether remoteip matches' },
  { value: 'refuse', label: 'Refuse tokens sent from another address' },
]

const ADDRESS_CHECK_HINT =
  'When your server sends the visitor\'s address as remoteip, Siteverify compares it with the address (IPv4) or /64 (IPv6) that earned the token: ' +
  'a token farmed on one machine and sent from another does not match. Report answers remoteipMatch; refuse also fails such a token. ' +
  'Behind a proxy, send the address the proxy saw. An address of the other family (IPv6 on the page, IPv4 at your server) is not compared.'

const formFields = [
  'name',
  'domains',
  ...listSettings.map((setting) => `settings.${setting.key}`),
  'settings.blockedHelpUrl',
  'settings.tokenAddressCheck',
  ...numberSettings.map((setting) => `settings.${setting.key}`),
]

type FormValues = { name: string; domains: string; blockedHelpUrl: string; tokenAddressCheck: TokenAddressCheck } & Record<ListSetting | NumberSetting, string>

function valuesOf(site: Site): FormValues {
  const { blockedHelpUrl, tokenAddressCheck } = site.settings
  const values = { name: site.name, domains: site.domains.join('\n'), blockedHelpUrl: blockedHelpUrl ?? '', tokenAddressCheck } as FormValues
  for (const { key } of listSettings) values[key] = site.settings[key].join('\n')
  for (const { key } of numberSettings) values[key] = String(site.settings[key])
  return values
}

/** Only what changed is sent: PUT merges, so untouched settings keep their values. */
function buildUpdate(site: Site, values: FormValues): SiteUpdate {
  const update: SiteUpdate = {}
  if (values.name.trim() !== site.name) update.name = values.name.trim()
  const domains = parseListEntries(values.domains)
  if (domains.join('\n') !== site.domains.join('\n')) update.domains = domains
  const settings: NonNullable<SiteUpdate['settings']> = {}
  for (const { key } of listSettings) {
    const entries = parseListEntries(values[key])
    if (entries.join('\n') !== site.settings[key].join('\n')) settings[key] = entries
  }
  const helpUrl = values.blockedHelpUrl.trim()
  // An emptied field is null: no link.
  if (helpUrl !== (site.settings.blockedHelpUrl ?? '')) settings.blockedHelpUrl = helpUrl === '' ? null : helpUrl
  if (values.tokenAddressCheck !== site.settings.tokenAddressCheck) settings.tokenAddressCheck = values.tokenAddressCheck
  for (const { key } of numberSettings) {
    const text = values[key].trim()
    if (text === String(site.settings[key])) continue
    // An emptied field is null: the API restores the default.
    settings[key] = text === '' ? null : Number(text)
  }
  if (Object.keys(settings).length > 0) update.settings = settings
  return update
}

interface SettingsPanelProps {
  site: Site
  onSaved: () => void
}

export function SettingsPanel({ site, onSaved }: SettingsPanelProps) {
  // The site as the API last stored it: the fields start from it and a save sends what differs
  // from it. A save's answer replaces it and refills the fields, so they show what was stored (an
  // emptied field's default, domains as normalized), and a field left as it was is not sent again
  // over a value another client has set since.
  const [stored, setStored] = useState(site)
  const [values, setValues] = useState(() => valuesOf(site))
  // Number fields whose text the browser cannot read as a number ("2e"): their value reads as "",
  // which would otherwise be sent as "back to the default".
  const [unreadable, setUnreadable] = useState<ReadonlySet<string>>(new Set())
  const [state, run] = useFormSubmit(formFields)
  const setValue = <Key extends keyof FormValues>(key: Key, value: FormValues[Key]) => setValues((previous) => ({ ...previous, [key]: value }))
  const markReadable = (key: string, isReadable: boolean) =>
    setUnreadable((previous) => {
      if (previous.has(key) !== isReadable) return previous
      const next = new Set(previous)
      if (isReadable) next.delete(key)
      else next.add(key)
      return next
    })

  const submit = () =>
    run(async () => {
      if (unreadable.size > 0) {
        const details = [...unreadable].map((key) => ({ field: `settings.${key}`, message: 'must be a whole number (or empty for the default)' }))
        throw new ApiRequestError(400, 'validation_error', 'The form is not valid.', undefined, details)
      }
      const update = buildUpdate(stored, values)
      if (Object.keys(update).length === 0) return 'Nothing changed.'
      // A list (domains, allowed or blocked addresses, blocked countries) replaces the stored one,
      // so a list edited from a stale read would undo an entry added meanwhile: it is sent only if
      // the site is still as read (If-Match). Name and numbers replace single values and merge key
      // by key, so they need no such condition.
      const hasList = update.domains !== undefined || listSettings.some(({ key }) => update.settings?.[key] !== undefined)
      const saved = await updateSite(site.id, update, hasList ? stored.etag : undefined)
      setStored(saved)
      setValues(valuesOf(saved))
      onSaved()
      const isReset = Object.values(update.settings ?? {}).some((value) => value === null)
      return isReset ? 'Settings saved; the emptied fields are back to their defaults.' : 'Settings saved.'
    })

  return (
    <section class="card" aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      <FormOutcome state={state} />
      <Form class="form" onSubmit={() => void submit()}>
        {/* A viewer reads the settings in their fields, which it cannot change (the page says why once). */}
        <fieldset class="fieldset--plain" disabled={!canChangeSite(site)} aria-describedby={canChangeSite(site) ? undefined : 'read-access-note'}>
          <Field id="settings-name" label={fieldLabelOf('name')} error={state.fieldErrors.name}>
            {(control) => <input {...control} name="name" required value={values.name} onInput={(event) => setValue('name', event.currentTarget.value)} />}
          </Field>
          <Field
            id="settings-domains"
            label={fieldLabelOf('domains')}
            error={state.fieldErrors.domains}
            hint="One hostname per line; each allows its subdomains too. Requests from other origins are refused. Empty allows any origin (development only)."
          >
            {(control) => (
              <textarea {...control} name="domains" rows={3} spellcheck={false} autoCapitalize="none" value={values.domains} onInput={(event) => setValue('domains', event.currentTarget.value)} />
            )}
          </Field>
          {listSettings.map(({ key, hint, rows }) => (
            <Field key={key} id={`settings-${key}`} label={fieldLabelOf(key)} error={state.fieldErrors[`settings.${key}`]} hint={hint}>
              {(control) => (
                <textarea
                  {...control}
                  name={key}
                  rows={rows}
                  spellcheck={false}
                  autoCapitalize={key === 'blockedCountries' ? 'characters' : 'none'}
                  value={values[key]}
                  onInput={(event) => setValue(key, event.currentTarget.value)}
                />
              )}
            </Field>
          ))}
          <Field id="settings-blockedHelpUrl" label={fieldLabelOf('blockedHelpUrl')} error={state.fieldErrors['settings.blockedHelpUrl']} hint={HELP_URL_HINT}>
            {(control) => (
              <input
                {...control}
                name="blockedHelpUrl"
                type="text"
                inputMode="url"
                maxLength={500}
                spellcheck={false}
                autoCapitalize="none"
                value={values.blockedHelpUrl}
                onInput={(event) => setValue('blockedHelpUrl', event.currentTarget.value)}
              />
            )}
          </Field>
          <Field id="settings-tokenAddressCheck" label={fieldLabelOf('tokenAddressCheck')} error={state.fieldErrors['settings.tokenAddressCheck']} hint={ADDRESS_CHECK_HINT}>
            {(control) => (
              <select {...control} name="tokenAddressCheck" value={values.tokenAddressCheck} onChange={(event) => setValue('tokenAddressCheck', event.currentTarget.value as TokenAddressCheck)}>
                {addressChecks.map(({ value, label }) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <div class="form__grid">
            {numberSettings.map(({ key, hint, min, max }) => (
              <Field key={key} id={`settings-${key}`} label={fieldLabelOf(key)} hint={hint} error={state.fieldErrors[`settings.${key}`]}>
                {(control) => (
                  <input
                    {...control}
                    name={key}
                    type="number"
                    inputMode="numeric"
                    step={1}
                    min={min}
                    max={max}
                    value={values[key]}
                    onInput={(event) => {
                      setValue(key, event.currentTarget.value)
                      markReadable(key, !event.currentTarget.validity.badInput)
                    }}
                  />
                )}
              </Field>
            ))}
          </div>
          <div class="form__actions">
            <BusyButton type="submit" class="button button--primary" isBusy={state.isBusy}>
              {state.isBusy ? 'Saving…' : 'Save settings'}
            </BusyButton>
          </div>
        </fieldset>
      </Form>
    </section>
  )
}

import type { Site } from '../../api/types.js'
import type { SiteScope } from '../../lib/api-keys.js'

interface SiteChoicesProps {
  /** The account's sites, its own and those shared with it; undefined while they load. */
  sites: readonly Site[] | undefined
  scope: SiteScope
  chosen: ReadonlySet<string>
  error: string | undefined
  onScopeChange: (scope: SiteScope) => void
  onChosenChange: (chosen: Set<string>) => void
  /** The prefix of its elements' ids: another for a second form on the page. */
  id?: string
}

const DEFAULT_ID = 'api-key-sites'

/**
 * The new key's sites: all of the account's (the default), or only some, a checkbox per site. A
 * key for some sites answers every other site as one the account has no part in, and cannot create
 * sites: the least a CI job per site needs.
 */
export function SiteChoices({ sites, scope, chosen, error, onScopeChange, onChosenChange, id: ID = DEFAULT_ID }: SiteChoicesProps) {
  const errorId = `${ID}-error`
  const hintId = `${ID}-hint`
  const describedBy = error === undefined ? hintId : `${errorId} ${hintId}`
  const invalid = error === undefined ? undefined : 'true'
  const toggle = (id: string, isChecked: boolean) => {
    const next = new Set(chosen)
    if (isChecked) next.add(id)
    else next.delete(id)
    onChosenChange(next)
  }
  return (
    <fieldset class={error === undefined ? 'field choices' : 'field field--invalid choices'} aria-describedby={describedBy}>
      <legend>Sites</legend>
      <div class="check">
        <input id={`${ID}-all`} type="radio" name="site-scope" value="all" checked={scope === 'all'} aria-invalid={invalid} onChange={() => onScopeChange('all')} />
        <div>
          <label for={`${ID}-all`}>All sites</label>
          <p class="field__hint">Every site you own or are a member of, now and later; it can create sites.</p>
        </div>
      </div>
      <div class="check">
        <input id={`${ID}-some`} type="radio" name="site-scope" value="some" checked={scope === 'some'} aria-invalid={invalid} onChange={() => onScopeChange('some')} />
        <div>
          <label for={`${ID}-some`}>Only these sites</label>
          <p class="field__hint">Any other site answers as if it did not exist, and the key cannot create sites.</p>
        </div>
      </div>
      {scope === 'all' ? null : sites === undefined ? (
        <p class="muted">Loading your sites…</p>
      ) : sites.length === 0 ? (
        <p class="muted">You have no sites yet.</p>
      ) : (
        <ul class="choices__list" aria-label="Sites of the key">
          {sites.map((site) => (
            <li class="check" key={site.id}>
              <input
                id={`${ID}-${site.id}`}
                type="checkbox"
                name="siteIds"
                value={site.id}
                checked={chosen.has(site.id)}
                aria-invalid={invalid}
                onChange={(event) => toggle(site.id, event.currentTarget.checked)}
              />
              <label for={`${ID}-${site.id}`}>{site.name}</label>
            </li>
          ))}
        </ul>
      )}
      {error === undefined ? null : (
        <p class="field__error" id={errorId}>
          {error}
        </p>
      )}
      <p class="field__hint" id={hintId}>
        A script for one site, such as its deploy job, is best given a key for that site only: leaked, it reaches nothing else.
      </p>
    </fieldset>
  )
}

import type { ApiKeyAccess } from '../../api/types.js'
import { accessChoices } from '../../lib/api-keys.js'

interface AccessChoicesProps {
  value: ApiKeyAccess
  error: string | undefined
  onChange: (access: ApiKeyAccess) => void
  /** The prefix of its elements' ids: another for a second form on the page. */
  id?: string
}

const DEFAULT_ID = 'api-key-access'

/**
 * The new key's access, a radio per choice. Each choice's hint is its description, not part of its
 * name ("Read only"); the group's hint and error are read with the group.
 */
export function AccessChoices({ value, error, onChange, id: ID = DEFAULT_ID }: AccessChoicesProps) {
  const errorId = `${ID}-error`
  const hintId = `${ID}-hint`
  return (
    <fieldset
      class={error === undefined ? 'field choices' : 'field field--invalid choices'}
      aria-describedby={error === undefined ? hintId : `${errorId} ${hintId}`}
    >
      <legend>Access</legend>
      {accessChoices.map(({ access, label, hint }) => (
        <div class="check" key={access}>
          <input
            id={`${ID}-${access}`}
            type="radio"
            name="access"
            value={access}
            checked={value === access}
            aria-describedby={error === undefined ? `${ID}-${access}-hint` : `${errorId} ${ID}-${access}-hint`}
            // Marks the group's error for the focus after a refused submission (the first invalid field).
            aria-invalid={error === undefined ? undefined : 'true'}
            onChange={() => onChange(access)}
          />
          <div>
            <label for={`${ID}-${access}`}>{label}</label>
            <p class="field__hint" id={`${ID}-${access}-hint`}>
              {hint}
            </p>
          </div>
        </div>
      ))}
      {error === undefined ? null : (
        <p class="field__error" id={errorId}>
          {error}
        </p>
      )}
      <p class="field__hint" id={hintId}>
        A script that only reads, such as a monitor or an export, is best given a read-only key: leaked, it changes nothing.
      </p>
    </fieldset>
  )
}

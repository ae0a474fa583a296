import { useEffect, useRef, useState } from 'preact/hooks'
import { isReference } from '../lib/reference.js'
import { isVerificationId } from '../lib/verification-labels.js'

interface ReferenceSearchProps {
  /** The prefix of the form's element ids. */
  id: string
  /** The reference searched for now ('' for none). */
  reference: string
  /** Called with a valid reference, or '' to stop searching. */
  onFind: (reference: string) => void
  /** What the hint says while nothing is searched for. */
  idleHint: string
  /** The label of the button that stops searching. */
  clearLabel: string
  /** A whole UUID is sought as Siteverify's verification_id too (a site's log): the hint says so. */
  findsVerificationIds?: boolean
}

/**
 * The search for a visitor's reference (`1a2b3c4d-5e6f`): checked as the API checks it before it
 * is sent, with a hint that says what is shown and is announced when it changes.
 */
export function ReferenceSearch({ id, reference, onFind, idleHint, clearLabel, findsVerificationIds = false }: ReferenceSearchProps) {
  const [text, setText] = useState(reference)
  const [error, setError] = useState<string | undefined>(undefined)
  // The search stopped from outside (the log filtered by a device instead): the box says so too.
  // Only on a change of the search: on mount the effect runs after the next frame, and would wipe
  // what was typed meanwhile (a fast typist, or a test, right after the page opened).
  const searched = useRef(reference)
  useEffect(() => {
    if (searched.current === reference) return
    searched.current = reference
    setText(reference)
  }, [reference])
  const find = (value: string) => {
    const wanted = value.trim()
    if (wanted !== '' && !isReference(wanted)) {
      setError('A reference is 8 or more hexadecimal digits from the start of an id, such as 1a2b3c4d-5e6f.')
      return
    }
    setError(undefined)
    setText(wanted)
    onFind(wanted)
  }
  return (
    <form
      class="log-search"
      role="search"
      aria-label="Find a visitor's reference"
      onSubmit={(event) => {
        event.preventDefault()
        find(text)
      }}
    >
      <label for={`${id}-reference`} class="toolbar__label">
        Reference
      </label>
      <input
        id={`${id}-reference`}
        class="code"
        value={text}
        placeholder="1a2b3c4d-5e6f"
        spellcheck={false}
        autoComplete="off"
        aria-describedby={`${id}-reference-hint`}
        aria-invalid={error === undefined ? undefined : 'true'}
        onInput={(event) => setText(event.currentTarget.value)}
      />
      <button type="submit" class="button button--small">
        Find
      </button>
      {reference === '' ? null : (
        <button type="button" class="button button--small" onClick={() => find('')}>
          {clearLabel}
        </button>
      )}
      <p id={`${id}-reference-hint`} aria-live="polite" class={error === undefined ? 'muted log-search__hint' : 'field__error log-search__hint'}>
        {error ??
          (reference === ''
            ? idleHint
            : findsVerificationIds && isVerificationId(reference)
              ? `Verifications whose id or Siteverify verification_id is ${reference}.`
              : `Verifications whose reference begins with ${reference}.`)}
      </p>
    </form>
  )
}

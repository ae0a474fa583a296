import type { RefObject } from 'preact'
import { CopyButton } from './copy-button.js'

interface SecretBoxProps {
  id: string
  label: string
  value: string
  /** Multi-line values (code snippets) get a text area. */
  isMultiline?: boolean
  /** What the copy button copies, when it is not the value shown (a key shown in groups of four). */
  copyText?: string
  /** Said under the value, and read with it by screen readers. */
  hint?: string
  /** For a value that appears after an action (a rotated key): the action moves focus to it. */
  inputRef?: RefObject<HTMLInputElement | null>
}

/** A label as it reads within a sentence: "Site key" as "site key", but "API key" kept so. */
function inSentence(label: string): string {
  return label.replace(/^\p{Lu}(?!\p{Lu})/u, (initial) => initial.toLowerCase())
}

/** A read-only value with a copy button; selecting it by hand works too. */
export function SecretBox({ id, label, value, isMultiline, copyText, hint, inputRef }: SecretBoxProps) {
  const selectAll = (event: FocusEvent) => (event.currentTarget as HTMLInputElement | HTMLTextAreaElement).select()
  const hintId = hint === undefined ? undefined : `${id}-hint`
  return (
    <div class="secret-box">
      <label for={id}>{label}</label>
      <div class="secret-box__row">
        {isMultiline === true ? (
          <textarea
            id={id}
            class="code"
            readOnly
            rows={value.split('\n').length}
            value={value}
            onFocus={selectAll}
            spellcheck={false}
            aria-describedby={hintId}
          />
        ) : (
          <input ref={inputRef} id={id} class="code" readOnly value={value} onFocus={selectAll} spellcheck={false} aria-describedby={hintId} />
        )}
        <CopyButton text={copyText ?? value} what={inSentence(label)} />
      </div>
      {hint === undefined ? null : (
        <p id={hintId} class="field__hint">
          {hint}
        </p>
      )}
    </div>
  )
}

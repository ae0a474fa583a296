import { CopyButton } from './copy-button.js'

interface SecretBoxProps {
  id: string
  label: string
  value: string
  /** Multi-line values (code snippets) get a text area. */
  isMultiline?: boolean
  /** What the copy button copies, when it is not the value shown (a key shown in groups of four). */
  copyText?: string
}

/** A read-only value with a copy button; selecting it by hand works too. */
export function SecretBox({ id, label, value, isMultiline, copyText }: SecretBoxProps) {
  const selectAll = (event: FocusEvent) => (event.currentTarget as HTMLInputElement | HTMLTextAreaElement).select()
  return (
    <div class="secret-box">
      <label for={id}>{label}</label>
      <div class="secret-box__row">
        {isMultiline === true ? (
          <textarea id={id} class="code" readOnly rows={value.split('\n').length} value={value} onFocus={selectAll} spellcheck={false} />
        ) : (
          <input id={id} class="code" readOnly value={value} onFocus={selectAll} spellcheck={false} />
        )}
        <CopyButton text={copyText ?? value} what={label.toLowerCase()} />
      </div>
    </div>
  )
}

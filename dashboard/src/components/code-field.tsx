import type { RefObject } from 'preact'
import { Field } from './field.js'

/**
 * What the field takes: the code an authenticator app shows, one of the recovery codes, or either
 * (where the server accepts both in one field: turning two-factor off, new recovery codes).
 */
export type CodeKind = 'authenticator' | 'recovery' | 'either'

const labels: Record<CodeKind, string> = {
  authenticator: 'Authentication code',
  recovery: 'Recovery code',
  either: 'Authentication or recovery code',
}

const hints: Record<CodeKind, string> = {
  authenticator: 'The 6-digit code your authenticator app shows for Tollgate now.',
  recovery: 'One of your saved recovery codes, such as k7m2-x9q4-r3tz. Each works once.',
  either: 'The 6-digit code your authenticator app shows now, or one of your unused recovery codes.',
}

interface CodeFieldProps {
  id: string
  kind: CodeKind
  value: string
  error: string | undefined
  onInput: (value: string) => void
  inputRef?: RefObject<HTMLInputElement | null>
}

/**
 * A second-factor code with its label, hint and error. An authenticator code brings up the digit
 * keyboard on a phone, and the browser may fill it in from a text message or a password manager
 * (one-time-code); a recovery code has letters, and must not be capitalized or corrected.
 */
export function CodeField({ id, kind, value, error, onInput, inputRef }: CodeFieldProps) {
  const isDigits = kind === 'authenticator'
  return (
    <Field id={id} label={labels[kind]} error={error} hint={hints[kind]}>
      {(control) => (
        <input
          {...control}
          ref={inputRef}
          class="code"
          name="code"
          required
          autoComplete={kind === 'recovery' ? 'off' : 'one-time-code'}
          inputMode={isDigits ? 'numeric' : 'text'}
          autoCapitalize="none"
          autoCorrect="off"
          spellcheck={false}
          value={value}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  )
}

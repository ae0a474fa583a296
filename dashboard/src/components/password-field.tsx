import { MIN_PASSWORD_LENGTH, newPasswordHint } from '../lib/password-rules.js'
import { Field } from './field.js'

interface PasswordFieldProps {
  id: string
  label: string
  name: string
  /** A password being chosen gets the rules' hint and minimum, and the browser's "new password" help. */
  isNew: boolean
  /** For a current password, why it is asked for (a new one's hint is the rules). */
  hint?: string
  value: string
  error: string | undefined
  onInput: (value: string) => void
  /** A current password asked for only sometimes (an edit that widens an API key): not required by the form. */
  isOptional?: boolean
}

/** A password input with its label, error and, for a new password, the rules. */
export function PasswordField({ id, label, name, isNew, hint, value, error, onInput, isOptional = false }: PasswordFieldProps) {
  return (
    <Field id={id} label={label} error={error} hint={isNew ? newPasswordHint : hint}>
      {(control) => (
        <input
          {...control}
          type="password"
          name={name}
          autoComplete={isNew ? 'new-password' : 'current-password'}
          required={!isOptional}
          minLength={isNew ? MIN_PASSWORD_LENGTH : undefined}
          value={value}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  )
}

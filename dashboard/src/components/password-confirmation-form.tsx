import type { ComponentChildren } from 'preact'
import type { FormSubmitState } from '../lib/use-form-submit.js'
import { Form } from './form.js'
import { Notice } from './notice.js'
import { PasswordField } from './password-field.js'

interface PasswordConfirmationFormProps {
  /** The form's id, which the dialog's confirm button submits (ConfirmDialog's formId). */
  id: string
  /** The id of its password field. */
  passwordId: string
  password: string
  onPassword: (value: string) => void
  state: FormSubmitState
  /** The code's field while two-factor is on (useStepUpCode's field). */
  codeField: ComponentChildren
  onSubmit: () => void
}

/**
 * The form of a dialog that confirms a change with the account's password and, while two-factor
 * is on, a code (deleting the account, handing a site over): the request's general error above
 * it, each field's beside it. The dialog's button submits it: Enter in either field confirms too.
 */
export function PasswordConfirmationForm({ id, passwordId, password, onPassword, state, codeField, onSubmit }: PasswordConfirmationFormProps) {
  return (
    <>
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      <Form id={id} class="form" onSubmit={onSubmit}>
        <PasswordField id={passwordId} label="Password" name="password" isNew={false} value={password} error={state.fieldErrors.password} onInput={onPassword} />
        {codeField}
      </Form>
    </>
  )
}

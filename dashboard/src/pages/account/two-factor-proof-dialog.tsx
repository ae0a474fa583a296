import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import type { TwoFactorProof } from '../../api/two-factor.js'
import { CodeField } from '../../components/code-field.js'
import { ConfirmDialog } from '../../components/confirm-dialog.js'
import { Form } from '../../components/form.js'
import { Notice } from '../../components/notice.js'
import { PasswordField } from '../../components/password-field.js'
import { cleanCode } from '../../lib/two-factor.js'
import { useFormSubmit } from '../../lib/use-form-submit.js'

interface TwoFactorProofDialogProps {
  /** The prefix of the ids of its form and fields. */
  id: string
  title: string
  confirmLabel: string
  isOpen: boolean
  /** What confirming does. */
  children: ComponentChildren
  /** The action, with the password and the code. A failure (a wrong password or code) is shown in the dialog. */
  onConfirm: (proof: TwoFactorProof) => Promise<void>
  onClose: () => void
}

/**
 * Asks for the password and a code of the second factor (an authenticator code or a recovery
 * code: someone who lost the app turns two-factor off with a recovery code) before a change of
 * the account's two-factor authentication. Closed and opened again, it starts clean.
 */
export function TwoFactorProofDialog({ id, title, confirmLabel, isOpen, children, onConfirm, onClose }: TwoFactorProofDialogProps) {
  const [password, setPassword] = useState('')
  const [code, setCode] = useState('')
  const [state, run, resetOutcome] = useFormSubmit(['password', 'code'])
  const forget = () => {
    setPassword('')
    setCode('')
    resetOutcome()
  }
  const close = () => {
    forget()
    onClose()
  }
  const confirm = () =>
    run(async () => {
      await onConfirm({ password, code: cleanCode(code) })
      // The password leaves the page's state at once, not when the dialog's close event comes.
      forget()
      return ''
    })
  return (
    <ConfirmDialog title={title} confirmLabel={confirmLabel} isOpen={isOpen} isBusy={state.isBusy} formId={`${id}-form`} onConfirm={() => void confirm()} onCancel={close}>
      {children}
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      <Form id={`${id}-form`} class="form" onSubmit={() => void confirm()}>
        <PasswordField id={`${id}-password`} label="Password" name="password" isNew={false} value={password} error={state.fieldErrors.password} onInput={setPassword} />
        <CodeField id={`${id}-code`} kind="either" value={code} error={state.fieldErrors.code} onInput={setCode} />
      </Form>
    </ConfirmDialog>
  )
}

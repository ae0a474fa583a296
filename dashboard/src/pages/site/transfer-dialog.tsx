import { useState } from 'preact/hooks'
import { transferOwnership } from '../../api/members.js'
import type { Site, SiteMember } from '../../api/types.js'
import { ConfirmDialog } from '../../components/confirm-dialog.js'
import { PasswordConfirmationForm } from '../../components/password-confirmation-form.js'
import { useStepUpCode, useTwoFactorGate } from '../../components/step-up-code.js'
import { useFormSubmit } from '../../lib/use-form-submit.js'

interface TransferDialogProps {
  site: Site
  /** The member to make the owner; the dialog is open while there is one. */
  member: SiteMember | undefined
  /** The transfer was made: the page follows the account's new role. */
  onTransferred: () => void
  onClose: () => void
}

/**
 * The confirmation of "Make owner": it names the member and says what changes, and asks for the
 * password, and while two-factor authentication is on a code, as deleting the account does (the
 * API takes the transfer from a logged-in session only, confirmed so). A wrong password or code
 * is said beside its field, and the dialog stays open.
 */
export function TransferDialog({ site, member, onTransferred, onClose }: TransferDialogProps) {
  const { gate } = useTwoFactorGate()
  const [password, setPassword] = useState('')
  const stepUp = useStepUpCode(gate)
  const [state, run, resetOutcome] = useFormSubmit(['password', 'code'])
  const close = () => {
    setPassword('')
    stepUp.reset()
    resetOutcome()
    onClose()
  }
  const transfer = () =>
    run(async () => {
      if (member === undefined) return ''
      await stepUp.send((code) => transferOwnership(site.id, member.accountId, password, code))
      setPassword('')
      stepUp.reset()
      resetOutcome()
      onTransferred()
      return ''
    })
  return (
    <ConfirmDialog
      title="Make this member the owner?"
      confirmLabel="Make owner"
      isOpen={member !== undefined}
      isBusy={state.isBusy}
      formId="transfer-form"
      onConfirm={() => void transfer()}
      onCancel={close}
    >
      {member === undefined ? null : (
        <>
          <p>
            <strong>{member.email}</strong> becomes the owner of {site.name}: they alone can delete it or hand it over, and it counts against their sites.
          </p>
          <p>
            <strong>You will become an admin.</strong> You keep all but deleting the site and handing it over; the new owner can change your role or remove you, and
            only they can make you the owner again.
          </p>
          {site.settings.requireTwoFactor && member.twoFactor === false ? (
            // The API refuses it (409 member_lacks_two_factor): said before the password is typed.
            <p>
              <strong>{member.email} has two-factor authentication off</strong>, which this site requires of its members: they must turn it on before they can own it.
            </p>
          ) : null}
          <p>Enter your password{gate.isOn ? ' and a code' : ''} to confirm.</p>
          <PasswordConfirmationForm
            id="transfer-form"
            passwordId="transfer-password"
            password={password}
            onPassword={setPassword}
            state={state}
            codeField={stepUp.field('transfer-code', state.fieldErrors.code)}
            onSubmit={() => void transfer()}
          />
        </>
      )}
    </ConfirmDialog>
  )
}

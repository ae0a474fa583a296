import { useEffect, useRef, useState } from 'preact/hooks'
import { isConflict } from '../../api/client.js'
import { beginTwoFactorSetup, replaceRecoveryCodes, turnOffTwoFactor, type TwoFactorProof } from '../../api/two-factor.js'
import type { TwoFactorSetup, TwoFactorStatus } from '../../api/types.js'
import { BusyButton } from '../../components/busy-button.js'
import { focusAfterDialog } from '../../components/confirm-dialog.js'
import { ErrorNotice, Loading, Notice } from '../../components/notice.js'
import { formatDateTime, formatNumber } from '../../lib/format.js'
import { FEW_RECOVERY_CODES } from '../../lib/two-factor.js'
import type { Loaded } from '../../lib/use-loader.js'
import { RecoveryCodes } from './recovery-codes.js'
import { TwoFactorProofDialog } from './two-factor-proof-dialog.js'
import { TwoFactorSetupPanel } from './two-factor-setup-panel.js'

interface TwoFactorSectionProps {
  email: string
  /** The Account page's: its password change and deletion ask for a code while two-factor is on. */
  status: Loaded<TwoFactorStatus>
  reload: () => void
}

/**
 * The account's two-factor authentication: what it is and a button to turn it on (the setup),
 * or since when it is on, the recovery codes left, new ones, and turning it off. A change made in
 * another tab meanwhile (the API's 409) reloads what the section shows.
 */
export function TwoFactorSection({ email, status, reload }: TwoFactorSectionProps) {
  const [setup, setSetup] = useState<TwoFactorSetup | undefined>()
  const [isBeginning, setBeginning] = useState(false)
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | undefined>()
  const [outcome, setOutcome] = useState<string | undefined>()
  const [error, setError] = useState<unknown>()
  const heading = useRef<HTMLHeadingElement>(null)
  // Found on by a reload the page's forms asked for (turned on in another tab): a setup begun here is over.
  const isOn = status.data?.enabled === true
  useEffect(() => {
    if (isOn) setSetup(undefined)
  }, [isOn])

  const begin = async () => {
    setBeginning(true)
    setError(undefined)
    setOutcome(undefined)
    try {
      setSetup(await beginTwoFactorSetup())
    } catch (caught) {
      setError(caught)
      if (isConflict(caught)) reload()
    } finally {
      setBeginning(false)
    }
  }
  const showChange = (message: string, codes: string[] | undefined) => {
    setError(undefined)
    setOutcome(message)
    setRecoveryCodes(codes)
    reload()
  }
  /** Changed in another tab meanwhile: the view that asked goes (and its button with it), saying why. */
  const onConflict = (caught: unknown) => {
    setSetup(undefined)
    // What the tab showed of the old state goes too: its success and its recovery codes.
    setOutcome(undefined)
    setRecoveryCodes(undefined)
    setError(caught)
    reload()
    focusAfterDialog(heading)
  }

  return (
    <section class="card" aria-labelledby="two-factor-heading">
      <h2 id="two-factor-heading" ref={heading} tabIndex={-1}>
        Two-factor authentication
      </h2>
      {outcome === undefined ? null : <Notice tone="success">{outcome}</Notice>}
      {error === undefined ? null : <ErrorNotice error={error} />}
      {recoveryCodes === undefined ? null : (
        <RecoveryCodes
          codes={recoveryCodes}
          email={email}
          onDone={() => {
            setRecoveryCodes(undefined)
            // The button goes with the codes: the keyboard goes back to the section's start.
            focusAfterDialog(heading)
          }}
        />
      )}
      {status.status === 'error' ? <ErrorNotice error={status.error} /> : null}
      {status.data === undefined ? (
        status.status === 'loading' ? <Loading /> : null
      ) : status.data.enabled ? (
        <TwoFactorOn
          status={status.data}
          onChanged={showChange}
          onConflict={onConflict}
          onTurnedOff={() => {
            showChange('Two-factor authentication is off: logging in asks for your password only.', undefined)
            // The Turn off button that opened the dialog goes with the section's view.
            focusAfterDialog(heading)
          }}
        />
      ) : setup === undefined ? (
        // Just turned on, until the reload says so: no Turn on button under the recovery codes.
        recoveryCodes === undefined ? <TwoFactorOff isBeginning={isBeginning} onBegin={() => void begin()} /> : null
      ) : (
        <TwoFactorSetupPanel
          key={setup.setupToken}
          setup={setup}
          email={email}
          onTurnedOn={(codes) => {
            setSetup(undefined)
            showChange('Two-factor authentication is on: logging in asks for a code from your authenticator app after your password.', codes)
          }}
          onRestart={() => void begin()}
          isRestarting={isBeginning}
          onConflict={onConflict}
          onCancel={() => {
            setSetup(undefined)
            // The Cancel button goes with the setup: the keyboard goes back to the section's start.
            focusAfterDialog(heading)
          }}
        />
      )}
    </section>
  )
}

function TwoFactorOff({ isBeginning, onBegin }: { isBeginning: boolean; onBegin: () => void }) {
  return (
    <div class="danger-row">
      <p class="muted">
        Off. With two-factor authentication on, logging in asks for your password and then for a code from an
        authenticator app on your phone, so a stolen password alone does not open your account.
      </p>
      <BusyButton type="button" class="button button--primary" isBusy={isBeginning} onClick={onBegin}>
        {isBeginning ? 'Starting…' : 'Turn on'}
      </BusyButton>
    </div>
  )
}

interface TwoFactorOnProps {
  status: TwoFactorStatus
  /** New recovery codes were made. */
  onChanged: (message: string, recoveryCodes: string[]) => void
  onTurnedOff: () => void
  /** Two-factor was turned off elsewhere in the meantime (409). */
  onConflict: (error: unknown) => void
}

/** A change asked for on the section, each after the password and a code (TwoFactorProofDialog). */
interface ProvenChange {
  id: 'new-codes' | 'turn-off'
  heading: string
  description: string
  buttonLabel: string
  buttonClass: string
  title: string
  confirmLabel: string
  /** What confirming does, said in the dialog. */
  consequence: string
  confirm: (proof: TwoFactorProof) => Promise<void>
}

function TwoFactorOn({ status, onChanged, onTurnedOff, onConflict }: TwoFactorOnProps) {
  const [pending, setPending] = useState<ProvenChange['id'] | 'none'>('none')
  const left = status.recoveryCodesLeft
  /** Runs a confirmed change; a 409 closes the dialog too, and is said above the section's view, which reloads. */
  const closeAfter = async (work: () => Promise<void>) => {
    try {
      await work()
    } catch (caught) {
      if (!isConflict(caught)) throw caught
      onConflict(caught)
    }
    setPending('none')
  }
  const changes: ProvenChange[] = [
    {
      id: 'new-codes',
      heading: 'Recovery codes',
      description: 'Each one logs you in once without your authenticator app. New codes replace all the old ones.',
      buttonLabel: 'New recovery codes',
      buttonClass: 'button',
      title: 'Make new recovery codes?',
      confirmLabel: 'Make new codes',
      consequence: 'Your current recovery codes stop working at once.',
      confirm: (proof) =>
        closeAfter(async () => onChanged('New recovery codes were made; the old ones no longer work.', await replaceRecoveryCodes(proof))),
    },
    {
      id: 'turn-off',
      heading: 'Turn off two-factor authentication',
      description: 'Logging in asks for your password only; your recovery codes stop working.',
      buttonLabel: 'Turn off',
      buttonClass: 'button button--danger-outline',
      title: 'Turn off two-factor authentication?',
      confirmLabel: 'Turn off',
      consequence: 'Anyone with your password can then log in to your account.',
      confirm: (proof) =>
        closeAfter(async () => {
          await turnOffTwoFactor(proof)
          onTurnedOff()
        }),
    },
  ]
  return (
    <>
      <dl class="facts two-factor-facts">
        <div>
          <dt>Status</dt>
          <dd>On since {formatDateTime(status.enabledAt)}</dd>
        </div>
        <div>
          <dt>Recovery codes left</dt>
          <dd>{formatNumber(left)}</dd>
        </div>
      </dl>
      {left > FEW_RECOVERY_CODES ? null : (
        <Notice tone="warning">
          {left === 0 ? 'You have no recovery codes left.' : `Only ${formatNumber(left)} recovery ${left === 1 ? 'code is' : 'codes are'} left.`}{' '}
          Make new ones, or losing your authenticator app will lock you out of your account.
        </Notice>
      )}
      {changes.map((change) => (
        <div key={change.id} class="danger-row">
          <div>
            <h3>{change.heading}</h3>
            <p class="muted">{change.description}</p>
          </div>
          <button type="button" class={change.buttonClass} onClick={() => setPending(change.id)}>
            {change.buttonLabel}
          </button>
          <TwoFactorProofDialog
            id={change.id}
            title={change.title}
            confirmLabel={change.confirmLabel}
            isOpen={pending === change.id}
            onConfirm={change.confirm}
            onClose={() => setPending('none')}
          >
            <p>{change.consequence} Enter your password and a code to confirm.</p>
          </TwoFactorProofDialog>
        </div>
      ))}
    </>
  )
}

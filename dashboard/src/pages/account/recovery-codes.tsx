import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { CopyButton } from '../../components/copy-button.js'
import { recoveryCodesText } from '../../lib/two-factor.js'

/**
 * The address of a text file made in the browser, for a download link (a blob: address, which the
 * dashboard's Content-Security-Policy does not govern: it is followed, not loaded into the page).
 * Given up when the text changes or the link goes.
 */
function useTextFileAddress(text: string): string | undefined {
  const [address, setAddress] = useState<string | undefined>()
  useEffect(() => {
    const made = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }))
    setAddress(made)
    return () => URL.revokeObjectURL(made)
  }, [text])
  return address
}

interface RecoveryCodesProps {
  codes: string[]
  email: string
  /** The user says the codes are saved: they leave the page. */
  onDone: () => void
}

/**
 * New recovery codes, shown once: the API keeps only their hashes. The heading takes the focus
 * when they appear, so a screen reader reads the warning with them and the keyboard is there.
 */
export function RecoveryCodes({ codes, email, onDone }: RecoveryCodesProps) {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [codes])
  const madeAt = useMemo(() => new Date(), [codes])
  const text = useMemo(() => recoveryCodesText({ email, origin: window.location.origin, codes, madeAt }), [codes, email, madeAt])
  // Named by server and day: a later set's file does not come down as "(1)" beside the dead codes.
  const fileName = `tollgate-recovery-codes-${window.location.hostname}-${madeAt.toISOString().slice(0, 10)}.txt`
  const fileAddress = useTextFileAddress(text)
  return (
    <div class="one-time recovery-codes">
      <h3 id="recovery-codes-heading" ref={heading} tabIndex={-1}>
        Your recovery codes
      </h3>
      <p class="one-time__warning">
        <strong>Save these codes now: they are shown only once.</strong> If you lose your authenticator app, each code logs
        you in once in place of its code. Keep them apart from your password, in a password manager or on paper.
      </p>
      <ol class="recovery-codes__list code" aria-labelledby="recovery-codes-heading">
        {codes.map((code) => (
          <li key={code}>{code}</li>
        ))}
      </ol>
      <div class="form__actions">
        <CopyButton text={codes.join('\n')} what="recovery codes" />
        {fileAddress === undefined ? null : (
          <a class="button button--small" href={fileAddress} download={fileName}>
            Download<span class="visually-hidden"> the recovery codes as a text file</span>
          </a>
        )}
        <button type="button" class="button button--small button--primary" onClick={onDone}>
          I have saved them
        </button>
      </div>
    </div>
  )
}

import { useEffect, useState } from 'preact/hooks'
import { ApiRequestError, isConflict } from '../api/client.js'
import { fetchTwoFactorStatus } from '../api/two-factor.js'
import type { TwoFactorStatus } from '../api/types.js'
import { cleanCode } from '../lib/two-factor.js'
import { useLoader, type Loaded } from '../lib/use-loader.js'
import { CodeField } from './code-field.js'

/** The account's two-factor authentication as the page last loaded it. */
export interface TwoFactorGate {
  /** False while it loads, or when it could not be loaded: the API then asks for the code itself. */
  isOn: boolean
  /** Loads the status again, for every form of the page (and the Account page's section) alike. */
  reload: () => void
}

/**
 * The account's two-factor status, loaded once for the page: its forms that ask for a code while
 * two-factor is on follow it together (the Account page's section shows it, and turns it on or off).
 */
export function useTwoFactorGate(): { status: Loaded<TwoFactorStatus>; gate: TwoFactorGate } {
  const [status, reload] = useLoader(fetchTwoFactorStatus, 'two-factor')
  return { status, gate: { isOn: status.data?.enabled === true, reload } }
}

const CHANGED_MEANWHILE =
  'Nothing was changed: two-factor authentication was turned on or off meanwhile, in another tab or browser. ' +
  'The form now shows whether it asks for a code; try again.'

/**
 * The second factor that changing the password, deleting the account and creating an API key ask
 * for while two-factor authentication is on: an authenticator code or an unused recovery code, in
 * the field the Account page's two-factor confirmations use. `send` runs the change with the code;
 * `field` is that field, shown while two-factor is on, or once the API asked for a code this page
 * did not know of.
 */
export function useStepUpCode({ isOn, reload }: TwoFactorGate) {
  const [code, setCode] = useState('')
  // Asked for by the API while the page did not know two-factor was on (its status not loaded):
  // the field stays until the form is done, even while a new try clears the errors.
  const [isAsked, setAsked] = useState(false)
  // Turned on or off (in the Account page's section, or found so by a reload): a code typed for
  // the state gone by is not sent with the next.
  useEffect(() => setCode(''), [isOn])
  /**
   * A wrong code empties the field (an authenticator code is not tried twice; a recovery code is
   * typed again). A code asked for while the page showed two-factor off, or the API's 409 (turned
   * on or off between the page's load and the change), reloads the status, which the page's forms
   * follow; the 409 is said in the form, as nothing was changed.
   */
  const send = async <T,>(change: (code: string | undefined) => Promise<T>): Promise<T> => {
    try {
      return await change(code === '' ? undefined : cleanCode(code))
    } catch (error) {
      if (!(error instanceof ApiRequestError)) throw error
      // The race's 409 names the code (a full list of API keys is another 409, said as it is).
      if (isConflict(error) && error.details.some((detail) => detail.field === 'code')) {
        setCode('')
        reload()
        throw new Error(CHANGED_MEANWHILE)
      }
      if (error.details.some((detail) => detail.field === 'code')) {
        setCode('')
        setAsked(true)
        if (!isOn) reload()
      }
      throw error
    }
  }
  const field = (id: string, error: string | undefined) =>
    isOn || isAsked || error !== undefined ? <CodeField id={id} kind="either" value={code} error={error} onInput={setCode} /> : null
  const reset = () => {
    setCode('')
    setAsked(false)
  }
  return { send, field, reset }
}

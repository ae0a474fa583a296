import { useRef, useState } from 'preact/hooks'
import { ApiRequestError, describeError } from '../api/client.js'
import { sortFieldErrors } from './field-errors.js'

/**
 * After the render that marks the fields, so the focused field is read with its error. Within an
 * open dialog when there is one: a field behind it, invalid from an earlier try, cannot take focus.
 */
export function focusFirstInvalidField(): void {
  window.requestAnimationFrame(() => (document.querySelector('dialog[open]') ?? document).querySelector<HTMLElement>('[aria-invalid="true"]')?.focus())
}

export interface FormSubmitState {
  isBusy: boolean
  fieldErrors: Record<string, string>
  generalError: string | undefined
  successMessage: string | undefined
}

const idle: FormSubmitState = { isBusy: false, fieldErrors: {}, generalError: undefined, successMessage: undefined }

/**
 * Runs a form's request and sorts its failure: validation details beside the fields the form
 * has, everything else in one message at the top of the form. The third element forgets the
 * last outcome (a form that is closed and opened again starts clean).
 */
export function useFormSubmit(fields: readonly string[]): [FormSubmitState, (work: () => Promise<string>) => Promise<void>, () => void] {
  const [state, setState] = useState<FormSubmitState>(idle)
  const isRunning = useRef(false)
  const run = async (work: () => Promise<string>) => {
    // A disabled submit button stops a second submission, but a form of one field has none to
    // disable: Enter pressed again while the request runs would send it twice.
    if (isRunning.current) return
    isRunning.current = true
    setState({ ...idle, isBusy: true })
    try {
      const successMessage = await work()
      setState({ ...idle, successMessage })
    } catch (error) {
      const sorted = error instanceof ApiRequestError ? sortFieldErrors(error.details, fields) : { byField: {}, general: [] }
      const hasFieldErrors = Object.keys(sorted.byField).length > 0
      // Placed messages need no banner: the first invalid field takes focus and is read with its message.
      const generalError = sorted.general.length > 0 ? sorted.general.join(' ') : hasFieldErrors ? undefined : describeError(error)
      setState({ isBusy: false, fieldErrors: sorted.byField, generalError, successMessage: undefined })
      if (hasFieldErrors) focusFirstInvalidField()
    } finally {
      isRunning.current = false
    }
  }
  return [state, run, () => setState(idle)]
}

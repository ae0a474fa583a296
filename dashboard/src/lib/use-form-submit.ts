import { useRef, useState } from 'preact/hooks'
import { ApiRequestError, describeError } from '../api/client.js'
import { sortFieldErrors } from './field-errors.js'

/**
 * After the render that marks the fields, so the focused field is read with its error. Within an
 * open dialog when there is one: a field behind it, invalid from an earlier try, cannot take focus.
 * A field that has the focus already (Enter pressed in it) gets no focus event, and a screen reader
 * would say nothing: its errors are then said in an alert, as the log-in page says its errors.
 * Only then: a field that takes focus is read with its error, and an alert as well would say it twice.
 */
export function focusFirstInvalidField(): void {
  window.requestAnimationFrame(() => {
    const scope = document.querySelector('dialog[open]') ?? document
    const field = scope.querySelector<HTMLElement>('[aria-invalid="true"]')
    if (field === null) return
    if (field === document.activeElement) announceAlert(describeInvalidFields(scope), scope)
    else field.focus()
  })
}

/** "Password: … is not your current password." for each invalid field, by its label and its error. */
function describeInvalidFields(scope: ParentNode): string {
  return Array.from(scope.querySelectorAll<HTMLElement>('[aria-invalid="true"]'), (field) => {
    const label = document.querySelector(`label[for="${CSS.escape(field.id)}"]`)?.textContent?.trim()
    const error = document.getElementById(`${field.id}-error`)?.textContent?.trim() ?? ''
    return label === undefined || label === '' ? error : `${label}: ${error}`
  })
    .filter((sentence) => sentence !== '')
    .join(' ')
}

/** The alert's pending change: its text coming, or its text going. */
let alertTimer: number | undefined

/**
 * Says `text` at once through one hidden role=alert region, kept in the page from the first call:
 * a region added together with its text is not reliably announced. Emptied first, so that the same
 * error after a second try is said again, and emptied some seconds after, so that it is not found
 * later, out of date, by someone reading the page through. In an open modal dialog, whose outside
 * is inert and not read, the region goes into the dialog.
 */
function announceAlert(text: string, scope: ParentNode): void {
  let region = document.getElementById('field-error-alert')
  if (region === null) {
    region = document.createElement('div')
    region.id = 'field-error-alert'
    region.className = 'visually-hidden'
    region.setAttribute('role', 'alert')
  }
  const host = scope instanceof HTMLDialogElement ? scope : document.body
  if (region.parentElement !== host) host.append(region)
  const target = region
  target.textContent = ''
  window.clearTimeout(alertTimer)
  alertTimer = window.setTimeout(() => {
    target.textContent = text
    alertTimer = window.setTimeout(() => (target.textContent = ''), 10_000)
  }, 100)
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
    // A busy submit button ignores presses, and Enter in a field too (the browser presses the form's
    // submit button for it), but a form of one field may have none: Enter pressed again while the
    // request runs would send it twice.
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

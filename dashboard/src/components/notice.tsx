import type { ComponentChildren } from 'preact'
import { describeError } from '../api/client.js'
import type { FormSubmitState } from '../lib/use-form-submit.js'

interface NoticeProps {
  tone: 'error' | 'success' | 'info' | 'warning'
  /**
   * Inside a live region of the caller's, which announces it already: the notice is no live
   * region of its own (one nested in another is read twice).
   */
  isInLiveRegion?: boolean
  children: ComponentChildren
}

/** Errors interrupt (role=alert); everything else is announced politely. */
export function Notice({ tone, isInLiveRegion, children }: NoticeProps) {
  const role = isInLiveRegion === true ? undefined : tone === 'error' ? 'alert' : 'status'
  return (
    <div class={`notice notice--${tone}`} role={role}>
      {children}
    </div>
  )
}

/** The outcome of a form submission: its general error, or its success message. */
export function FormOutcome({ state }: { state: Pick<FormSubmitState, 'generalError' | 'successMessage'> }) {
  return (
    <>
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      {state.successMessage === undefined ? null : <Notice tone="success">{state.successMessage}</Notice>}
    </>
  )
}

export function ErrorNotice({ error }: { error: unknown }) {
  return <Notice tone="error">{describeError(error)}</Notice>
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="loading" role="status">
      {label}
    </p>
  )
}

import type { ComponentChildren, RefObject } from 'preact'
import { useLayoutEffect, useRef } from 'preact/hooks'
import { BusyButton } from './busy-button.js'

interface ConfirmDialogProps {
  title: string
  children: ComponentChildren
  confirmLabel: string
  isOpen: boolean
  isBusy?: boolean
  /**
   * The id of a form in the dialog that the confirm button submits (the form's onSubmit then
   * confirms): Enter in any of its fields confirms too, which a form of several fields without a
   * submit button of its own would not do.
   */
  formId?: string
  /** The confirm button's look: danger (the default) for what destroys, primary for a plain save. */
  confirmTone?: 'danger' | 'primary'
  /** The confirm button is disabled: a choice the action needs is not made yet. */
  isConfirmDisabled?: boolean
  onConfirm: () => void
  onCancel: () => void
}

/**
 * A native modal <dialog>: the browser traps focus, closes it on Escape and restores focus to
 * the button that opened it. Cancel is focused first so that Enter never destroys by accident.
 * While the action is under way (`isBusy`), neither Cancel nor Escape closes it: the action
 * would go on behind a closed dialog and land its outcome there. An action that removes the
 * button that opened it calls focusAfterDialog.
 */
export function ConfirmDialog({ title, children, confirmLabel, isOpen, isBusy, formId, confirmTone = 'danger', isConfirmDisabled, onConfirm, onCancel }: ConfirmDialogProps) {
  const dialog = useRef<HTMLDialogElement>(null)
  const cancel = useRef<HTMLButtonElement>(null)
  // In the render itself, not after the next frame: focusAfterDialog relies on the dialog being
  // closed (and focus back on its opener) by the time that frame comes.
  useLayoutEffect(() => {
    const element = dialog.current
    if (element === null) return
    if (isOpen && !element.open) {
      element.showModal()
      cancel.current?.focus()
    }
    if (!isOpen && element.open) element.close()
  }, [isOpen])
  const titleId = `dialog-${title.replace(/\W+/g, '-').toLowerCase()}`
  return (
    <dialog
      ref={dialog}
      class="dialog"
      aria-labelledby={titleId}
      onClose={onCancel}
      // While the action runs it cannot be called off: Escape does not close the dialog then.
      onCancel={(event) => {
        if (isBusy === true) event.preventDefault()
      }}
    >
      <h2 id={titleId}>{title}</h2>
      <div class="dialog__body">{children}</div>
      <div class="dialog__actions">
        <button ref={cancel} type="button" class="button" onClick={onCancel} disabled={isBusy === true}>
          Cancel
        </button>
        {/* Busy, not disabled: a disabled button would drop the focus, and an error that keeps the
            dialog open (a 429, say) would leave the keyboard nowhere in it. */}
        <BusyButton
          type={formId === undefined ? 'button' : 'submit'}
          form={formId}
          class={`button button--${confirmTone}`}
          onClick={formId === undefined ? onConfirm : undefined}
          isBusy={isBusy === true}
          isDisabled={isConfirmDisabled === true}
        >
          {isBusy === true ? 'Working…' : confirmLabel}
        </BusyButton>
      </div>
    </dialog>
  )
}

/**
 * Moves focus to `target` once the dialog that confirmed an action has closed. For actions that
 * remove the button that opened the dialog (a revoked key's row): the browser returns focus to
 * that button, and when it goes, focus falls to the page's start, where keyboard and screen
 * reader users lose their place. Call it on success, in the handler that closes the dialog.
 */
export function focusAfterDialog(target: RefObject<HTMLElement | null>): void {
  window.requestAnimationFrame(() => target.current?.focus())
}

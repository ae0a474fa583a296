import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'

interface ConfirmDialogProps {
  title: string
  children: ComponentChildren
  confirmLabel: string
  isOpen: boolean
  isBusy?: boolean
  onConfirm: () => void
  onCancel: () => void
}

/**
 * A native modal <dialog>: the browser traps focus, closes it on Escape and restores focus to
 * the button that opened it. Cancel is focused first so that Enter never destroys by accident.
 * While the action is under way (`isBusy`), neither Cancel nor Escape closes it: the action
 * would go on behind a closed dialog and land its outcome there.
 */
export function ConfirmDialog({ title, children, confirmLabel, isOpen, isBusy, onConfirm, onCancel }: ConfirmDialogProps) {
  const dialog = useRef<HTMLDialogElement>(null)
  const cancel = useRef<HTMLButtonElement>(null)
  useEffect(() => {
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
        <button type="button" class="button button--danger" onClick={onConfirm} disabled={isBusy === true}>
          {isBusy === true ? 'Working…' : confirmLabel}
        </button>
      </div>
    </dialog>
  )
}

import type { ButtonHTMLAttributes } from 'preact'

type BusyButtonProps = Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'disabled'> & {
  /**
   * The button's action is under way: presses are ignored until it ends. Also for a button that its
   * own press can leave with nothing to do (a pager's Older on the last page), which keeps the focus.
   */
  isBusy: boolean
  /** The button cannot act at all (nothing to send, say): disabled, as usual. */
  isDisabled?: boolean
}

/**
 * A button whose action takes a while. While it runs the button says so (aria-disabled) and
 * ignores presses, but keeps the keyboard focus: a disabled button drops the focus to the page,
 * and a keyboard or screen-reader user loses their place.
 */
export function BusyButton({ isBusy, isDisabled = false, onClick, ...rest }: BusyButtonProps) {
  return (
    <button
      {...rest}
      disabled={isDisabled}
      aria-disabled={isBusy ? 'true' : undefined}
      onClick={(event) => {
        // A submit button's press would submit the form: useFormSubmit ignores a second run too.
        if (isBusy) event.preventDefault()
        else onClick?.call(event.currentTarget, event)
      }}
    />
  )
}

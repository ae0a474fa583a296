import type { ComponentChildren } from 'preact'

interface FormProps {
  class: string
  /** For a submit button outside the form (a dialog's confirm button). */
  id?: string
  /** Runs on submit (a button, or Enter in a field); the page stays where it is. */
  onSubmit: () => void
  children: ComponentChildren
}

/**
 * A form the app submits itself: the browser neither loads a page nor checks the fields with its
 * own bubbles, so the service's validation messages show beside the fields, in one style.
 */
export function Form({ class: className, id, onSubmit, children }: FormProps) {
  return (
    <form
      id={id}
      class={className}
      noValidate
      onSubmit={(event) => {
        event.preventDefault()
        onSubmit()
      }}
    >
      {children}
    </form>
  )
}

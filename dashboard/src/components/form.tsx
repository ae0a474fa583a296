import type { ComponentChildren } from 'preact'

interface FormProps {
  class: string
  /** Runs on submit (a button, or Enter in a field); the page stays where it is. */
  onSubmit: () => void
  children: ComponentChildren
}

/**
 * A form the app submits itself: the browser neither loads a page nor checks the fields with its
 * own bubbles, so the service's validation messages show beside the fields, in one style.
 */
export function Form({ class: className, onSubmit, children }: FormProps) {
  return (
    <form
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

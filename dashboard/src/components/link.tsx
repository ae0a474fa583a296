import type { ComponentChildren } from 'preact'
import { hrefOf, navigate, type Route } from '../lib/router.js'

interface LinkProps {
  to: Route
  /** The view's choices on the page it leads to (useAddressParam's), such as `{ reference }`. */
  query?: Record<string, string>
  children: ComponentChildren
  class?: string
  isCurrent?: boolean
}

/** A real link (middle-click and copy work) that navigates inside the app on a plain click. */
export function Link({ to, query, children, class: className, isCurrent }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(to, query === undefined ? {} : { query })
  }
  return (
    <a href={hrefOf(to, query)} class={className} onClick={onClick} aria-current={isCurrent === true ? 'page' : undefined}>
      {children}
    </a>
  )
}

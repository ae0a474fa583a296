import type { ComponentChildren } from 'preact'
import { navigate, pathOf, type Route } from '../lib/router.js'

interface LinkProps {
  to: Route
  children: ComponentChildren
  class?: string
  isCurrent?: boolean
}

/** A real link (middle-click and copy work) that navigates inside the app on a plain click. */
export function Link({ to, children, class: className, isCurrent }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(to)
  }
  return (
    <a href={pathOf(to)} class={className} onClick={onClick} aria-current={isCurrent === true ? 'page' : undefined}>
      {children}
    </a>
  )
}

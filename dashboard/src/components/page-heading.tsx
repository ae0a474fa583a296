import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'
import { hasNavigatedInApp } from '../lib/router.js'

interface PageHeadingProps {
  title: string
  children?: ComponentChildren
}

/**
 * The page's h1. After an in-app navigation it takes focus, so screen reader and keyboard
 * users start reading at the new page instead of staying on the link they activated.
 */
export function PageHeading({ title, children }: PageHeadingProps) {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${title} · Tollgate`
    if (hasNavigatedInApp()) heading.current?.focus()
  }, [title])
  return (
    <div class="page-heading">
      <h1 ref={heading} tabIndex={-1}>
        {title}
      </h1>
      {children}
    </div>
  )
}

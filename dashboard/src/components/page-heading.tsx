import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'
import { hasNavigatedInApp } from '../lib/router.js'

interface PageHeadingProps {
  title: string
  /** The window's title when it should say more than the heading (the section of a site). */
  documentTitle?: string
  children?: ComponentChildren
}

/**
 * The page's h1. After an in-app navigation it takes focus, so screen reader and keyboard
 * users start reading at the new page instead of staying on the link they activated. The window's
 * title names the view, so that tabs, history and bookmarks tell the views apart.
 */
export function PageHeading({ title, documentTitle, children }: PageHeadingProps) {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${documentTitle ?? title} · Tollgate`
  }, [title, documentTitle])
  useEffect(() => {
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

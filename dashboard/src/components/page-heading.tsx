import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'
import { hasNavigatedInApp } from '../lib/router.js'

interface PageHeadingProps {
  title: string
  /** The window's title when it should say more than the heading (the section of a site). */
  documentTitle?: string
  /**
   * When the heading takes focus: after an in-app navigation (the default), or whenever it is
   * drawn, for a view that replaces a form in place (its submit button, which had the focus, goes
   * with it), even on a page that was loaded directly.
   */
  takesFocus?: 'after-navigation' | 'always'
  children?: ComponentChildren
}

/**
 * The page's h1. After an in-app navigation it takes focus, so screen reader and keyboard
 * users start reading at the new page instead of staying on the link they activated. The window's
 * title names the view, so that tabs, history and bookmarks tell the views apart.
 */
export function PageHeading({ title, documentTitle, takesFocus = 'after-navigation', children }: PageHeadingProps) {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${documentTitle ?? title} · Tollgate`
  }, [title, documentTitle])
  useEffect(() => {
    if (takesFocus === 'always' || hasNavigatedInApp()) heading.current?.focus()
  }, [title, takesFocus])
  return (
    <div class="page-heading">
      <h1 ref={heading} tabIndex={-1}>
        {title}
      </h1>
      {children}
    </div>
  )
}

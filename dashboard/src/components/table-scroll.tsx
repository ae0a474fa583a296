import type { ComponentChildren } from 'preact'

interface TableScrollProps {
  /** What the table lists, as its section's heading names it: "Your keys". */
  title: string
  isBusy?: boolean
  children: ComponentChildren
}

/**
 * The box a table wider than the window scrolls sideways in. It takes the keyboard (tabIndex 0),
 * so it is a named region; named "Your keys table", not by the section's heading alone: the
 * section is a region of that name already, and two landmarks of one name cannot be told apart.
 */
export function TableScroll({ title, isBusy, children }: TableScrollProps) {
  return (
    <div class="table-scroll" role="region" aria-label={`${title} table`} aria-busy={isBusy} tabIndex={0}>
      {children}
    </div>
  )
}

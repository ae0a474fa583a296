import { useCallback, useState } from 'preact/hooks'
import { useLoader } from './use-loader.js'

interface Page<T> {
  items: T[]
  nextCursor: string | null
}

/** A first page with the load that read it, which reads its older pages: the same filter, whatever the page's key is now. */
interface FirstPage<T> extends Page<T> {
  loadOlder: (cursor: string) => Promise<Page<T>>
}

/** The older pages shown after one first page, and the load of the next of them. */
interface Older<T> {
  after: FirstPage<T>
  items: T[]
  nextCursor: string | null
  isBusy: boolean
  error?: unknown
}

export interface AppendedPages<T> {
  /** The first page's items and the older ones shown after them; undefined until the first page arrives. */
  items: T[] | undefined
  /** The first page's load: while a new key or a reload loads, the items on screen are the last ones. */
  status: 'loading' | 'ready' | 'error'
  error: unknown
  hasOlder: boolean
  isLoadingOlder: boolean
  olderError: unknown
  showOlder: () => void
  reload: () => void
}

/**
 * A log read newest first, a page at a time, each older page appended below the ones shown
 * (rather than replacing them, as the verification log's pages do): what was read stays in view.
 * The first page loads when `key` changes (useLoader); older pages belong to the first page they
 * followed, so a new key or a reload drops them, and an older page that arrives after that is
 * dropped too.
 */
export function useAppendedPages<T>(load: (cursor: string | undefined) => Promise<Page<T>>, key: string): AppendedPages<T> {
  const loadFirst = useCallback(async (): Promise<FirstPage<T>> => ({ ...(await load(undefined)), loadOlder: load }), [load])
  const [first, reload] = useLoader(loadFirst, key)
  const [older, setOlder] = useState<Older<T> | undefined>()
  const current = older !== undefined && older.after === first.data ? older : undefined
  const nextCursor = current === undefined ? (first.data?.nextCursor ?? null) : current.nextCursor

  const showOlder = () => {
    const after = first.data
    if (first.status !== 'ready' || after === undefined || nextCursor === null || current?.isBusy === true) return
    const items = current?.items ?? []
    setOlder({ after, items, nextCursor, isBusy: true })
    // With the first page's own load: in the moment between a new key and its load's start, the
    // first page on screen is still the old key's, and so is its cursor.
    after.loadOlder(nextCursor).then(
      (page) =>
        setOlder((previous) => (previous?.after === after ? { after, items: [...previous.items, ...page.items], nextCursor: page.nextCursor, isBusy: false } : previous)),
      (error: unknown) => setOlder((previous) => (previous?.after === after ? { ...previous, isBusy: false, error } : previous)),
    )
  }

  return {
    items: first.data === undefined ? undefined : current === undefined ? first.data.items : [...first.data.items, ...current.items],
    status: first.status,
    error: first.status === 'error' ? first.error : undefined,
    hasOlder: nextCursor !== null,
    isLoadingOlder: current?.isBusy === true,
    olderError: current?.error,
    showOlder,
    reload,
  }
}

import { useCallback, useEffect, useRef, useState } from 'preact/hooks'

export type Loaded<T> =
  | { status: 'loading'; data?: T }
  | { status: 'ready'; data: T }
  | { status: 'error'; error: unknown; data?: T }

/**
 * Loads data when `key` changes and on reload(). An answer that arrives after a newer request
 * started is dropped, so a fast click through ranges or filters never shows stale data. While a
 * new key loads, the last data stays on screen (marked loading); if that load fails, data of
 * another key is dropped rather than shown under the new one (a failed reload of the same key
 * keeps it). The third function is reload for a Refresh button (see refresh below).
 */
export function useLoader<T>(load: () => Promise<T>, key: string): [Loaded<T>, () => void, () => void] {
  const [state, setState] = useState<{ loaded: Loaded<T>; dataKey?: string }>({ loaded: { status: 'loading' } })
  const [generation, setGeneration] = useState(0)
  const latest = useRef(0)
  // Set from a load's request (or refresh's press) until its answer: the rendered busy state comes
  // later, after the effect has run, and a second press in between must not load again.
  const busy = useRef(false)
  const loadRef = useRef(load)
  loadRef.current = load

  useEffect(() => {
    const ticket = ++latest.current
    busy.current = true
    setState((previous) => ({ loaded: { status: 'loading', data: previous.loaded.data }, dataKey: previous.dataKey }))
    loadRef.current().then(
      (data) => {
        if (ticket !== latest.current) return
        busy.current = false
        setState({ loaded: { status: 'ready', data }, dataKey: key })
      },
      (error: unknown) => {
        if (ticket !== latest.current) return
        busy.current = false
        setState((previous) =>
          previous.dataKey === key ? { loaded: { status: 'error', error, data: previous.loaded.data }, dataKey: key } : { loaded: { status: 'error', error } },
        )
      },
    )
  }, [key, generation])

  const reload = useCallback(() => setGeneration((value) => value + 1), [])
  /** reload for a Refresh button: a press while a load is under way is ignored, however soon it comes. */
  const refresh = useCallback(() => {
    if (busy.current) return
    busy.current = true
    setGeneration((value) => value + 1)
  }, [])
  return [state.loaded, reload, refresh]
}

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
 * keeps it).
 */
export function useLoader<T>(load: () => Promise<T>, key: string): [Loaded<T>, () => void] {
  const [state, setState] = useState<{ loaded: Loaded<T>; dataKey?: string }>({ loaded: { status: 'loading' } })
  const [generation, setGeneration] = useState(0)
  const latest = useRef(0)
  const loadRef = useRef(load)
  loadRef.current = load

  useEffect(() => {
    const ticket = ++latest.current
    setState((previous) => ({ loaded: { status: 'loading', data: previous.loaded.data }, dataKey: previous.dataKey }))
    loadRef.current().then(
      (data) => {
        if (ticket === latest.current) setState({ loaded: { status: 'ready', data }, dataKey: key })
      },
      (error: unknown) => {
        if (ticket !== latest.current) return
        setState((previous) =>
          previous.dataKey === key ? { loaded: { status: 'error', error, data: previous.loaded.data }, dataKey: key } : { loaded: { status: 'error', error } },
        )
      },
    )
  }, [key, generation])

  const reload = useCallback(() => setGeneration((value) => value + 1), [])
  return [state.loaded, reload]
}

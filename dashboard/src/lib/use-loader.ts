import { useCallback, useEffect, useRef, useState } from 'preact/hooks'

export type Loaded<T> =
  | { status: 'loading'; data?: T }
  | { status: 'ready'; data: T }
  | { status: 'error'; error: unknown; data?: T }

/**
 * Loads data when `key` changes and on reload(). An answer that arrives after a newer request
 * started is dropped, so a fast click through ranges or filters never shows stale data.
 */
export function useLoader<T>(load: () => Promise<T>, key: string): [Loaded<T>, () => void] {
  const [state, setState] = useState<Loaded<T>>({ status: 'loading' })
  const [generation, setGeneration] = useState(0)
  const latest = useRef(0)
  const loadRef = useRef(load)
  loadRef.current = load

  useEffect(() => {
    const ticket = ++latest.current
    setState((previous) => ({ status: 'loading', data: previous.data }))
    loadRef.current().then(
      (data) => {
        if (ticket === latest.current) setState({ status: 'ready', data })
      },
      (error: unknown) => {
        if (ticket === latest.current) setState((previous) => ({ status: 'error', error, data: previous.data }))
      },
    )
  }, [key, generation])

  const reload = useCallback(() => setGeneration((value) => value + 1), [])
  return [state, reload]
}

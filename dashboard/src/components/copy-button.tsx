import { useEffect, useState } from 'preact/hooks'

/** The Clipboard API needs a secure context; plain http on a LAN address falls back to execCommand. */
async function copyText(text: string): Promise<boolean> {
  if (navigator.clipboard !== undefined && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text)
      return true
    } catch {
      // Permission refused: try the legacy path below.
    }
  }
  const area = document.createElement('textarea')
  area.value = text
  area.setAttribute('readonly', '')
  area.className = 'visually-hidden'
  document.body.append(area)
  area.select()
  const isCopied = document.execCommand('copy')
  area.remove()
  return isCopied
}

interface CopyButtonProps {
  text: string
  /** What is copied, for the accessible name: "Copy site key". */
  what: string
}

export function CopyButton({ text, what }: CopyButtonProps) {
  const [outcome, setOutcome] = useState<'idle' | 'copied' | 'failed'>('idle')
  useEffect(() => {
    if (outcome === 'idle') return
    const timer = window.setTimeout(() => setOutcome('idle'), 2_000)
    return () => window.clearTimeout(timer)
  }, [outcome])
  const onClick = () => {
    void copyText(text).then((isCopied) => setOutcome(isCopied ? 'copied' : 'failed'))
  }
  return (
    <>
      {/* The hidden words complete the accessible name ("Copy site key") and keep the visible text part of it. */}
      <button type="button" class="button button--small" onClick={onClick}>
        {outcome === 'copied' ? 'Copied' : 'Copy'}
        <span class="visually-hidden"> {what}</span>
      </button>
      <span class="visually-hidden" role="status">
        {outcome === 'copied' ? `${what} copied to the clipboard` : outcome === 'failed' ? `Could not copy the ${what}; select it and copy it by hand` : ''}
      </span>
    </>
  )
}

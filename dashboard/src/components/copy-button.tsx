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
  // Selecting the text area takes the focus: it goes back where it was (the copy button for a
  // keyboard user) rather than to the page once the area is removed.
  const focused = document.activeElement instanceof HTMLElement ? document.activeElement : null
  const area = document.createElement('textarea')
  area.value = text
  area.setAttribute('readonly', '')
  area.className = 'visually-hidden'
  document.body.append(area)
  area.select()
  let isCopied = false
  try {
    isCopied = document.execCommand('copy')
  } catch {
    // Refused outright by some browsers: reported as not copied.
  }
  area.remove()
  focused?.focus({ preventScroll: true })
  return isCopied
}

interface CopyButtonProps {
  text: string
  /** What is copied, for the accessible name: "Copy site key". */
  what: string
}

/**
 * A button that copies `text` and says so only once the clipboard has taken it ("Copied" for two
 * seconds). A copy that failed says so, visibly and to screen readers, until the next press.
 */
export function CopyButton({ text, what }: CopyButtonProps) {
  const [outcome, setOutcome] = useState<'idle' | 'copied' | 'failed'>('idle')
  useEffect(() => {
    if (outcome !== 'copied') return
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
      <span class={outcome === 'failed' ? 'field__error copy-button__error' : 'visually-hidden'} role="status">
        {outcome === 'copied' ? `${what} copied to the clipboard` : outcome === 'failed' ? `Could not copy the ${what}; select it and copy it by hand` : ''}
      </span>
    </>
  )
}

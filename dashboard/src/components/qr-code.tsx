import { useEffect, useState } from 'preact/hooks'
import { qrCodePath } from '../lib/qr-code.js'

/** The light margin scanners need around a code, in modules (ISO/IEC 18004 asks for 4). */
const QUIET_ZONE = 4

interface QrCodeProps {
  text: string
  /** The text alternative: what the code holds, and where else the page gives it. */
  label: string
}

type Drawing = { path: string; side: number } | 'loading' | 'failed'

/**
 * A QR code drawn as inline SVG: one path of the dark modules on a white square. Presentation
 * attributes, not style attributes, so the dashboard's Content-Security-Policy (style-src 'self')
 * allows it, and no image is loaded from anywhere. The encoder is a chunk of its own, fetched
 * when a code is first shown: only the setup of two-factor authentication needs it, and it would
 * add about 4 kB (gzipped) to every page's script.
 */
export function QrCode({ text, label }: QrCodeProps) {
  const [drawing, setDrawing] = useState<Drawing>('loading')
  useEffect(() => {
    let isCurrent = true
    import('uqr')
      .then(({ encode }) => {
        // Medium error correction: still read from a screen that glares or is partly covered.
        const { data, size } = encode(text, { ecc: 'M', border: 0 })
        if (isCurrent) setDrawing({ path: qrCodePath(data), side: size + 2 * QUIET_ZONE })
      })
      .catch(() => {
        // The chunk not found (the dashboard rebuilt while the tab was open), or a text too long to encode.
        if (isCurrent) setDrawing('failed')
      })
    return () => {
      isCurrent = false
    }
  }, [text])
  if (drawing === 'failed') return <p class="qr-code-missing">The QR code could not be shown: type the setup key into the app instead, or reload the page.</p>
  if (drawing === 'loading') return <div class="qr-code" aria-busy="true" />
  const { path, side } = drawing
  return (
    <svg class="qr-code" viewBox={`${-QUIET_ZONE} ${-QUIET_ZONE} ${side} ${side}`} role="img" aria-label={label} shape-rendering="crispEdges">
      <rect x={-QUIET_ZONE} y={-QUIET_ZONE} width={side} height={side} fill="#ffffff" />
      <path d={path} fill="#000000" />
    </svg>
  )
}

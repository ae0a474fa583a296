import { useMemo } from 'preact/hooks'
import { encode } from 'uqr'
import { qrCodePath } from '../lib/qr-code.js'

/** The light margin scanners need around a code, in modules (ISO/IEC 18004 asks for 4). */
const QUIET_ZONE = 4

interface QrCodeProps {
  text: string
  /** The text alternative: what the code holds, and where else the page gives it. */
  label: string
}

/**
 * A QR code drawn as inline SVG: one path of the dark modules on a white square. Presentation
 * attributes, not style attributes, so the dashboard's Content-Security-Policy (style-src 'self')
 * allows it, and no image is loaded from anywhere.
 */
export function QrCode({ text, label }: QrCodeProps) {
  // Medium error correction: still read from a screen that glares or is partly covered. Encoded
  // once per text, not on every keystroke in the form beside it (the mask is chosen by trying all 8).
  const { path, side } = useMemo(() => {
    const { data, size } = encode(text, { ecc: 'M', border: 0 })
    return { path: qrCodePath(data), side: size + 2 * QUIET_ZONE }
  }, [text])
  return (
    <svg class="qr-code" viewBox={`${-QUIET_ZONE} ${-QUIET_ZONE} ${side} ${side}`} role="img" aria-label={label} shape-rendering="crispEdges">
      <rect x={-QUIET_ZONE} y={-QUIET_ZONE} width={side} height={side} fill="#ffffff" />
      <path d={path} fill="#000000" />
    </svg>
  )
}

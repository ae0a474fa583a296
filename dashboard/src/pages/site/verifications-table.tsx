import type { ListDecision, Verification } from '../../api/types.js'
import { BusyButton } from '../../components/busy-button.js'
import { formatCountry, formatDateAndTimeWithSeconds, timeZoneName } from '../../lib/format.js'
import { referenceOf } from '../../lib/reference.js'
import { LabelBadge } from './verification-label.js'
import { TableScroll } from '../../components/table-scroll.js'

interface VerificationsTableProps {
  verifications: readonly Verification[]
  isLoading: boolean
  /** Shows the verifications of a row's device. */
  onDevice: (device: string) => void
  /** Label controls for a scored row: absent for those who may not change the site (viewers), who see the labels only. */
  labeling?: { onLabel: (verification: Verification) => void; onRemove: (verification: Verification) => void; busyRowId: string | undefined }
}

/** What a list's badge on a row means, in its title. */
const listTitles: Record<ListDecision, string> = {
  allowlist: "Allowed by the site's address allowlist, not judged by the risk model",
  blocklist: "Blocked by the site's blocklist (its addresses or countries), not judged by the risk model",
}

/** The proof of work's figures, each kept whole (a no-break space before its unit): the cell may wrap between them, to fit the log at a laptop's width. */
function describeSolve(verification: Verification): string {
  const parts = [
    verification.difficulty === null ? undefined : `${verification.difficulty}\u00a0bits`,
    verification.solveTimeMs === null ? undefined : `${verification.solveTimeMs}\u00a0ms`,
  ].filter((part) => part !== undefined)
  return parts.length === 0 ? '—' : parts.join(', ')
}

/** The rows of a page of the log (some: the log's status line says when there are none, and why). */
export function VerificationsTable({ verifications, isLoading, onDevice, labeling }: VerificationsTableProps) {
  return (
    <TableScroll title="Verifications" isBusy={isLoading}>
      <table class="table log">
        <thead>
          <tr>
            <th scope="col">Time ({timeZoneName})</th>
            <th scope="col">Action</th>
            <th scope="col" class="numeric">
              Risk
            </th>
            <th scope="col">Anomalies</th>
            <th scope="col">Country</th>
            <th scope="col">Client</th>
            <th scope="col" class="log__wrapping-head">
              Proof of work
            </th>
            <th scope="col">Label</th>
          </tr>
        </thead>
        <tbody>
          {verifications.map((verification) => (
            <tr key={verification.id} data-id={verification.id} data-action={verification.action}>
              <td>
                <LoggedAt iso={verification.createdAt} />
                <div class="log__reference" title="The reference the visitor was shown">
                  <span class="visually-hidden">Reference </span>
                  <span class="code muted">{referenceOf(verification.id)}</span>
                </div>
              </td>
              <td>
                <span class={`badge badge--${verification.action}`}>{verification.action}</span>
                {/* == null: an instance older than migration 030 (a rolling upgrade) sends no decidedBy. */}
                {verification.decidedBy == null ? null : (
                  <span class="badge badge--list" title={listTitles[verification.decidedBy]}>
                    <span class="visually-hidden">decided by the </span>
                    {verification.decidedBy}
                  </span>
                )}
                {verification.errorCode === null ? null : <div class="code log__error">{verification.errorCode}</div>}
                {verification.pageAction === null ? null : <div class="muted" title="The page's action">{verification.pageAction}</div>}
              </td>
              <td class="numeric">{verification.riskScore ?? '—'}</td>
              <td>
                {verification.anomalies.length === 0 ? (
                  <span class="muted">none</span>
                ) : (
                  <ul class="chips">
                    {verification.anomalies.map((anomaly) => (
                      <li key={anomaly} class="chip">
                        {anomaly}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
              <td>{formatCountry(verification.countryCode)}</td>
              <td class="log__client">
                <div class="code">{verification.clientIp ?? '—'}</div>
                {verification.hostname === null ? null : <div class="muted">{verification.hostname}</div>}
                {verification.userAgent === null ? null : (
                  <div class="muted log__agent" title={verification.userAgent}>
                    {verification.userAgent}
                  </div>
                )}
                {verification.device === null ? null : <DeviceButton device={verification.device} onDevice={onDevice} />}
              </td>
              <td>{describeSolve(verification)}</td>
              <td>
                <LabelBadge verification={verification} />
                {labeling === undefined || verification.verificationId === null ? null : (
                  <LabelButtons verification={verification} {...labeling} />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  )
}

/** A row's time: its date and its time each kept whole, on two lines when the column is narrow (the log fits a laptop's width). */
function LoggedAt({ iso }: { iso: string }) {
  const parts = formatDateAndTimeWithSeconds(iso)
  if (parts === null) return <span>{iso}</span>
  return (
    <>
      <span class="nowrap">{parts.date}</span> <span class="nowrap">{parts.time}</span>
    </>
  )
}

/** A row's device (its first digits, the whole in its title), which shows that device's verifications. */
function DeviceButton({ device, onDevice }: { device: string; onDevice: (device: string) => void }) {
  return (
    <button type="button" class="log__device code" title={`Device ${device}: show its verifications`} onClick={() => onDevice(device)}>
      <span class="visually-hidden">Show the verifications of </span>device {device.slice(0, 8)}
    </button>
  )
}

/**
 * A scored row's label controls, each named with the row's reference for screen readers ("Change
 * the label of verification 1a2b3c4d-5e6f"). Busy while the row's last change is reloaded. The
 * words seen are one span: a button is a flex box, and a text run of its own would lose the space
 * that begins it ("Changelabel").
 */
function LabelButtons({ verification, onLabel, onRemove, busyRowId }: NonNullable<VerificationsTableProps['labeling']> & { verification: Verification }) {
  const reference = referenceOf(verification.id)
  const isBusy = busyRowId === verification.id
  return (
    <div class="log__label-actions">
      <BusyButton type="button" class="button button--small" isBusy={isBusy} onClick={() => onLabel(verification)}>
        {verification.label === null ? (
          <>
            Label<span class="visually-hidden"> verification {reference}</span>
          </>
        ) : (
          <>
            <span>
              Change<span class="visually-hidden"> the</span> label
            </span>
            <span class="visually-hidden"> of verification {reference}</span>
          </>
        )}
      </BusyButton>
      {verification.label === null ? null : (
        <BusyButton type="button" class="button button--small" isBusy={isBusy} onClick={() => onRemove(verification)}>
          <span>
            Remove<span class="visually-hidden"> the</span> label
          </span>
          <span class="visually-hidden"> of verification {reference}</span>
        </BusyButton>
      )}
    </div>
  )
}

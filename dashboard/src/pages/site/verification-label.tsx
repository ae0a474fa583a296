import { useLayoutEffect, useState } from 'preact/hooks'
import { labelVerification } from '../../api/analytics.js'
import type { LabelReason, Verification, VerificationLabel } from '../../api/types.js'
import { ConfirmDialog } from '../../components/confirm-dialog.js'
import { Field } from '../../components/field.js'
import { Form } from '../../components/form.js'
import { Notice } from '../../components/notice.js'
import { referenceOf } from '../../lib/reference.js'
import { useFormSubmit } from '../../lib/use-form-submit.js'
import { LABEL_NOTE_MAX_LENGTH, labelNames, REASONS_BY_LABEL, reasonNames, sourceNames, VERIFICATION_LABELS } from '../../lib/verification-labels.js'

/** A row's label as a badge, with its reason, who set it and its note in small text beneath. */
export function LabelBadge({ verification }: { verification: Verification }) {
  const { label, labelReason, labelSource, labelNote } = verification
  if (label === null) return null
  const details = [labelReason === null ? undefined : reasonNames[labelReason], labelSource === null ? undefined : sourceNames[labelSource]].filter(
    (part) => part !== undefined,
  )
  return (
    <div class="log__label" data-label={label}>
      <span class={`badge badge--${label}`}>{labelNames[label]}</span>
      {details.length === 0 ? null : <div class="muted log__label-details">{details.join(', ')}</div>}
      {labelNote === null ? null : (
        <div class="muted log__label-note" title={labelNote}>
          <span class="visually-hidden">Note: </span>
          {labelNote}
        </div>
      )}
    </div>
  )
}

interface LabelDialogProps {
  siteId: string
  /** The row being labeled; the dialog is open while there is one. */
  target: Verification | undefined
  /** After the label is saved, with the label it got. */
  onLabeled: (label: VerificationLabel) => void
  onClose: () => void
}

/**
 * Sets a row's label (replacing any, the backend's too): legitimate or fraudulent, an optional
 * reason among those that go with that label (REASONS_BY_LABEL, as the API checks) and an
 * optional note. Each opening starts from the row's label; an unlabeled row's starts with none
 * chosen, so that nothing is labeled by a Save pressed without a choice.
 */
export function LabelDialog({ siteId, target, onLabeled, onClose }: LabelDialogProps) {
  const [label, setLabel] = useState<VerificationLabel | undefined>(undefined)
  const [reason, setReason] = useState<LabelReason | ''>('')
  const [note, setNote] = useState('')
  const [state, run, resetOutcome] = useFormSubmit(['label', 'reason', 'note'])
  // Before the dialog is painted open: it shows the row's label, not the last row's choice or outcome.
  useLayoutEffect(() => {
    if (target === undefined) return
    setLabel(target.label ?? undefined)
    setReason(target.labelReason ?? '')
    setNote(target.labelNote ?? '')
    resetOutcome()
  }, [target])
  const save = () =>
    run(async () => {
      if (target === undefined || label === undefined) return ''
      await labelVerification(siteId, target.id, { label, reason: reason === '' ? null : reason, note: note.trim() === '' ? null : note.trim() })
      onLabeled(label)
      return ''
    })
  return (
    <ConfirmDialog
      title="Label verification"
      confirmLabel="Save label"
      confirmTone="primary"
      isOpen={target !== undefined}
      isBusy={state.isBusy}
      formId="label-form"
      isConfirmDisabled={label === undefined}
      onConfirm={() => void save()}
      onCancel={onClose}
    >
      {target === undefined ? null : (
        <>
          <p>
            What the visitor of verification <span class="code">{referenceOf(target.id)}</span> (risk {target.riskScore ?? '—'}) turned out to be. A
            fraudulent label on a verification of the last 30 minutes also makes the next challenges of its client harder for up to 30 minutes.
          </p>
          {target.verificationId === null ? null : (
            <p class="muted">
              Siteverify's verification_id: <span class="code" data-verification-id>{target.verificationId}</span>
            </p>
          )}
        </>
      )}
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      <Form id="label-form" class="form" onSubmit={() => void save()}>
        <fieldset class="field choices">
          <legend>Label</legend>
          {VERIFICATION_LABELS.map((name) => (
            <label class="check" key={name}>
              <input
                type="radio"
                name="label"
                value={name}
                checked={label === name}
                onChange={() => {
                  setLabel(name)
                  // A reason of the other label does not go with this one (the API refuses the pair).
                  if (reason !== '' && !REASONS_BY_LABEL[name].includes(reason)) setReason('')
                }}
              />
              <span>{labelNames[name]}</span>
            </label>
          ))}
          {label === undefined ? <p class="muted">Choose a label to save.</p> : null}
        </fieldset>
        <Field id="label-reason" label="Reason (optional)" error={state.fieldErrors.reason}>
          {(control) => (
            <select {...control} value={reason} disabled={label === undefined} onChange={(event) => setReason(event.currentTarget.value as LabelReason | '')}>
              <option value="">No reason</option>
              {(label === undefined ? [] : REASONS_BY_LABEL[label]).map((name) => (
                <option key={name} value={name}>
                  {reasonNames[name]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          id="label-note"
          label="Note (optional)"
          hint={`Up to ${LABEL_NOTE_MAX_LENGTH} characters, for your team: an order number, not personal data.`}
          error={state.fieldErrors.note}
        >
          {(control) => <input {...control} type="text" maxLength={LABEL_NOTE_MAX_LENGTH} value={note} onInput={(event) => setNote(event.currentTarget.value)} />}
        </Field>
      </Form>
    </ConfirmDialog>
  )
}

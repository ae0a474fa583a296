import type { ComponentChildren } from 'preact'

/** Attributes a control needs so that its label, hint and error are announced with it. */
export interface ControlProps {
  id: string
  'aria-describedby'?: string
  'aria-invalid'?: 'true'
}

interface FieldProps {
  id: string
  label: string
  hint?: ComponentChildren
  error?: string
  /** Renders the input, select or textarea with the given attributes spread onto it. */
  children: (control: ControlProps) => ComponentChildren
  /** Something shown after the label, such as a "secret is set" badge. */
  badge?: ComponentChildren
}

export function Field({ id, label, hint, error, children, badge }: FieldProps) {
  const hintId = hint === undefined ? undefined : `${id}-hint`
  const errorId = error === undefined ? undefined : `${id}-error`
  const describedBy = [errorId, hintId].filter((part) => part !== undefined).join(' ')
  return (
    <div class={error === undefined ? 'field' : 'field field--invalid'}>
      <div class="field__label-row">
        <label for={id}>{label}</label>
        {badge}
      </div>
      {children({
        id,
        ...(describedBy === '' ? {} : { 'aria-describedby': describedBy }),
        ...(error === undefined ? {} : { 'aria-invalid': 'true' as const }),
      })}
      {error === undefined ? null : (
        <p class="field__error" id={errorId}>
          {error}
        </p>
      )}
      {hint === undefined ? null : (
        <p class="field__hint" id={hintId}>
          {hint}
        </p>
      )}
    </div>
  )
}

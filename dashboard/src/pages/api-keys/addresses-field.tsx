import { Field } from '../../components/field.js'

interface AddressesFieldProps {
  id: string
  value: string
  error: string | undefined
  hint: string
  onInput: (value: string) => void
}

/** The addresses a key may be used from, one IP address or range per line; empty for any address. */
export function AddressesField({ id, value, error, hint, onInput }: AddressesFieldProps) {
  return (
    <Field id={id} label="Allowed addresses" error={error} hint={hint}>
      {(control) => (
        <textarea
          {...control}
          name="allowedAddresses"
          rows={2}
          spellcheck={false}
          autoCapitalize="none"
          placeholder="Any address"
          value={value}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  )
}

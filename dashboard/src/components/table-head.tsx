/**
 * A table's header row: a column heading each, and a last column, named for screen readers only,
 * over the rows' buttons.
 */
export function TableHeadWithActions({ columns }: { columns: readonly string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => (
          <th key={column} scope="col">
            {column}
          </th>
        ))}
        <th scope="col">
          <span class="visually-hidden">Actions</span>
        </th>
      </tr>
    </thead>
  )
}

// Small helpers for the SQL the stores write.

/**
 * A store's column list (stores name their columns, never `*`, so that a column a later migration adds changes no
 * statement's answer), each prefixed with a table's alias.
 */
export const qualified = (columns: string, alias: string): string =>
  columns
    .split(', ')
    .map((column) => `${alias}.${column}`)
    .join(', ');

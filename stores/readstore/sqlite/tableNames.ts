// The SQLite names of a collection's tables, key columns and declared indexes.
import type { IndexDeclaration } from '../indexDeclarations';

export const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** Collection names come from the read models' code, a few dozen: each table name is made once, not at every write. */
const docTables = new Map<string, string>();

/** The table holding a collection's documents, one row each. */
export function docTable(collection: string): string {
  let table = docTables.get(collection);
  if (table === undefined) docTables.set(collection, (table = `c:${collection}`));
  return table;
}

/** The side table holding the elements of a collection's declared array fields. */
export const keyTable = (collection: string): string => `k:${collection}`;

/**
 * The column holding a declared scalar field's index key (indexKeys.ts, keyAt): written with the
 * row, so an index is built by sorting the column, not by parsing every document's JSON once per index.
 */
export const keyColumnName = (path: string): string => `k:${path}`;
export const keyColumn = (path: string): string => quote(keyColumnName(path));

/** The SQLite name of a declared index: its table and its fields, `-` marking a descending one. */
export function indexName(table: string, declaration: IndexDeclaration): string {
  return `${table}:${Object.entries(declaration.keys).map(([path, direction]) => `${path}${direction === -1 ? '-' : ''}`).join(',')}`;
}

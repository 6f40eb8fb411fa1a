// The keys SQL searches a document's row by: a declared scalar field's value as SQLite compares it
// the way mingo does, or no key where it cannot. Scalars are ordered as MongoDB orders them
// (null < numbers < strings < booleans): the key of a boolean is a one-byte blob, which SQLite
// orders after text.
import { isPlainObject } from '../documents/plainObjects';
import type { Document, DocumentId } from '../readStore';

/** The row's unique key for a document id: its JSON, so that 1 and '1' stay apart. */
export const idKey = (id: DocumentId): string => JSON.stringify(id);

const TRUE_KEY = Buffer.from([1]);
const FALSE_KEY = Buffer.from([0]);

/** A scalar as an SQL key, or undefined for values SQL does not compare as mingo does. */
export function sqlKey(value: unknown): string | number | Buffer | undefined {
  if (typeof value === 'string') return value;
  // JSON cannot hold -0, NaN or the infinities: they are stored tagged, out of SQL's reach.
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0) ? value : undefined;
  if (typeof value === 'boolean') return value ? TRUE_KEY : FALSE_KEY;
  return undefined;
}

/** A field SQL cannot compare as mingo does: an array on its path, or a value sqlKey has no key for. */
export const IRREGULAR = Symbol('irregular');

/**
 * The index key of the value at a dotted path: its scalar (sqlKey: booleans as blobs, which SQLite
 * orders after text, as MongoDB orders booleans after strings); null when it is absent or null, or
 * under a value that holds no fields (as the stored JSON has it); IRREGULAR when SQL cannot compare
 * it exactly (an array on the way, or a date, bytes, -0, NaN or an infinity there).
 */
export function keyAt(doc: Document, path: readonly string[]): string | number | Buffer | null | typeof IRREGULAR {
  let node: unknown = doc;
  for (const part of path) {
    if (node === undefined || node === null) return null;
    if (Array.isArray(node)) return IRREGULAR;
    if (typeof node !== 'object' || node instanceof Date || node instanceof Uint8Array) return null;
    node = (node as Record<string, unknown>)[part];
  }
  if (node === undefined || node === null) return null;
  return sqlKey(node) ?? IRREGULAR;
}

/** The keys an equality query on the path matches, MongoDB-style: the scalars there, and those inside arrays. */
export function keysAt(node: unknown, parts: readonly string[]): (string | number | Buffer)[] {
  if (parts.length === 0) {
    const items = Array.isArray(node) ? node : [node];
    return items.map(sqlKey).filter((key) => key !== undefined);
  }
  if (Array.isArray(node)) return node.flatMap((item) => keysAt(item, parts));
  if (!isPlainObject(node)) return [];
  return keysAt(node[parts[0]!], parts.slice(1));
}

// Documents as the JSON their rows hold, and back, with the values JSON lacks kept tagged (encode).
import { isPlainObject } from '../documents/plainObjects';
import type { Document } from '../readStore';
import { sqlKey } from './indexKeys';

/** Whether the value holds anything plain JSON would not give back as it is (dates, bytes, -0, NaN, infinities). */
function needsTags(value: unknown): boolean {
  if (typeof value === 'number') return sqlKey(value) === undefined;
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (const item of value) if (needsTags(item)) return true;
    return false;
  }
  if (!isPlainObject(value)) return true;
  for (const key in value) if (needsTags(value[key])) return true;
  return false;
}

// JSON keeps the few non-JSON values read models may hold as tagged objects (MongoDB forbids `$` keys
// in documents, so these cannot clash with stored data). A replacer makes stringify several times
// slower, and most documents need none.
export function encode(doc: Document): string {
  if (!needsTags(doc)) return JSON.stringify(doc);
  return JSON.stringify(doc, function (this: Record<string, unknown>, key: string, value: unknown) {
    const raw = this[key];
    if (raw instanceof Date) return { $date: raw.toISOString() };
    if (raw instanceof Uint8Array) return { $binary: Buffer.from(raw).toString('base64') };
    if (typeof raw === 'number' && sqlKey(raw) === undefined) return { $double: Object.is(raw, -0) ? '-0' : String(raw) };
    return value;
  });
}

/** The value a tagged object stands for (one key, `$date`, `$binary` or `$double`, with a string), else undefined. */
function untagged(o: Record<string, unknown>): unknown {
  let only: string | undefined;
  for (const key in o) {
    if (only !== undefined) return undefined;
    only = key;
  }
  const value = only === undefined ? undefined : o[only];
  if (typeof value !== 'string') return undefined;
  if (only === '$date') return new Date(value);
  if (only === '$binary') return Buffer.from(value, 'base64');
  if (only === '$double') return Number(value);
  return undefined;
}

/** Puts back, in place, the values that JSON kept tagged (see encode). */
function revive(node: unknown[] | Record<string, unknown>): void {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const value = node[i];
      if (value === null || typeof value !== 'object') continue;
      const plain = Array.isArray(value) ? undefined : untagged(value as Record<string, unknown>);
      if (plain !== undefined) node[i] = plain;
      else revive(value as unknown[] | Record<string, unknown>);
    }
    return;
  }
  for (const key in node) {
    const value = node[key];
    if (value === null || typeof value !== 'object') continue;
    const plain = Array.isArray(value) ? undefined : untagged(value as Record<string, unknown>);
    if (plain !== undefined) node[key] = plain;
    else revive(value as unknown[] | Record<string, unknown>);
  }
}

export function decode(text: string): Document {
  const doc = JSON.parse(text) as Document;
  // A walk after parsing costs a third of a reviver's calls; most documents need neither.
  if (text.includes('"$date"') || text.includes('"$binary"') || text.includes('"$double"')) revive(doc);
  return doc;
}

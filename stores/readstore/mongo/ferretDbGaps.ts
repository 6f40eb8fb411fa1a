// What FerretDB (on which CI runs this adapter) gets wrong, and how the adapter plans around it so
// that it answers like the memory adapter (same MQL, evaluated there by mingo):
// - `$elemMatch` with field conditions (`{ items: { $elemMatch: { k: 2 } } }`) matches nothing or
//   errors: such top-level clauses are left off the server query and tested here with mingo.
// - `$pull` only removes elements equal to the value (`$pull: { a: { $gt: 1 } }` is a no-op) and
//   `$push` ignores `$slice`/`$sort`/`$position`: the new array is computed here with mingo and
//   written with `$set`, guarded by the old array, retrying if it changed meanwhile.
// - `$setOnInsert` skips fields whose value is null or an empty array: an upsert that inserted sets
//   them with `$set` right after (a reader may see the document a moment without them).
import { Query } from 'mingo';
import type { Filter as MongoFilter } from 'mongodb';
import { isPlainObject } from '../documents/plainObjects';
import type { Document, Filter, Update } from '../readStore';

/** `$elemMatch` keys FerretDB cannot evaluate: any field condition, and these operators inside it. */
const ELEM_MATCH_UNSUPPORTED = new Set(['$and', '$or', '$nor', '$ne', '$not']);

function needsClient(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(needsClient);
  if (!isPlainObject(value)) return false;
  return Object.entries(value).some(([key, inner]) =>
    key === '$elemMatch' && isPlainObject(inner)
      ? Object.keys(inner).some((k) => !k.startsWith('$') || ELEM_MATCH_UNSUPPORTED.has(k)) || needsClient(inner)
      : needsClient(inner),
  );
}

export interface FilterPlan {
  /** What the server evaluates: the filter, less the top-level clauses it would get wrong. */
  server: MongoFilter<Document>;
  /** Set when clauses were left off: the whole filter, tested here on what the server returns. */
  residual?: Query;
}

export function planFilter(filter: Filter): FilterPlan {
  const server: Record<string, unknown> = {};
  let residual = false;
  for (const [key, value] of Object.entries(filter)) {
    if (needsClient({ [key]: value })) residual = true;
    else server[key] = value;
  }
  return residual ? { server, residual: new Query(filter, {}) } : { server };
}

export type ClientOps = { $pull?: Record<string, unknown>; $push?: Record<string, unknown> };

/** Splits off the `$pull`/`$push` entries FerretDB would get wrong (see the header). */
export function splitUpdate(update: Update): { server: Update; client?: ClientOps } {
  const client: ClientOps = {};
  const server: Update = { ...update };
  for (const op of ['$pull', '$push'] as const) {
    const entries = update[op];
    if (!entries) continue;
    const kept: Record<string, unknown> = {};
    const moved: Record<string, unknown> = {};
    for (const [path, value] of Object.entries(entries)) {
      const evaluateHere =
        op === '$pull' ? isPlainObject(value) : isPlainObject(value) && '$each' in value && Object.keys(value).length > 1;
      (evaluateHere ? moved : kept)[path] = value;
    }
    if (Object.keys(moved).length === 0) continue;
    client[op] = moved;
    if (Object.keys(kept).length > 0) server[op] = kept;
    else delete server[op];
  }
  return Object.keys(client).length > 0 ? { server, client } : { server };
}

/** The `$setOnInsert` fields FerretDB leaves out of an inserted document. */
export function droppedOnInsert(update: Update): Record<string, unknown> | undefined {
  const dropped = Object.entries(update.$setOnInsert ?? {}).filter(([, v]) => v === null || (Array.isArray(v) && v.length === 0));
  return dropped.length > 0 ? Object.fromEntries(dropped) : undefined;
}

export function getPath(doc: unknown, path: string): unknown {
  let value = doc;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

export function and(...filters: MongoFilter<Document>[]): MongoFilter<Document> {
  const parts = filters.filter((f) => Object.keys(f).length > 0);
  return parts.length === 1 ? parts[0]! : { $and: parts };
}

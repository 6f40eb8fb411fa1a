// A filter test without mingo for the filters the hot paths make: building a mingo Query costs more
// than a single-document read or a projection's guarded update. Shared by the memory and SQLite
// stores, so both answer these filters with the very same code.
import type { Document, Filter } from './readStore';

/**
 * The hot lookups (by id, by key hash, by owner) are equalities on top-level fields: tested here
 * without building a mingo Query, whose setup dominates a single-document read. The semantics are
 * MongoDB's for such filters (an array field matches when it holds the value); anything else
 * (operators, dotted paths, nulls, objects) goes to mingo.
 */
export type Scalar = string | number | boolean;
export const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

export function equalityMatcher(filter: Filter): ((doc: Document) => boolean) | undefined {
  const tests: ((doc: Document) => boolean)[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key.startsWith('$') || key.includes('.')) return undefined;
    if (isScalar(value)) {
      tests.push((doc) => {
        const field = doc[key];
        return field === value || (Array.isArray(field) && field.includes(value));
      });
      continue;
    }
    const ops = value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : [];
    const [op] = ops;
    // `{ _id: { $in: [...] } }`, lookups of several documents by id, with scalar values only.
    if (ops.length === 1 && op && op[0] === '$in' && Array.isArray(op[1]) && op[1].every(isScalar)) {
      const wanted = new Set<unknown>(op[1]);
      tests.push((doc) => {
        const field = doc[key];
        return wanted.has(field) || (Array.isArray(field) && field.some((v) => wanted.has(v)));
      });
      continue;
    }
    // `{ _position: { $lt: p } }`, the projections' replay guard: a comparison of same-typed scalars.
    if (ops.length !== 1 || !op || op[0] !== '$lt' || (typeof op[1] !== 'string' && typeof op[1] !== 'number')) return undefined;
    const bound = op[1];
    tests.push((doc) => {
      const field = doc[key];
      return typeof field === typeof bound && (field as typeof bound) < bound;
    });
  }
  return (doc) => tests.every((t) => t(doc));
}

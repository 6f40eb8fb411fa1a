// The hot lookups' filters tested without mingo (see equalityMatcher), used by every adapter that
// tests documents itself: the memory store, the SQLite store and the write buffer.
import { Query } from 'mingo';
import type { Document, Filter } from '../readStore';
import { isPlainObject } from './plainObjects';

/**
 * The hot lookups (by id, by key hash, by owner) are equalities on top-level fields: tested here
 * without building a mingo Query, whose setup dominates a single-document read. The semantics are
 * MongoDB's for such filters (an array field matches when it holds the value); anything else
 * (operators, dotted paths, nulls, objects) goes to mingo.
 */
type Scalar = string | number | boolean;
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
    // `{ _samplesPosition: { $not: { $gte: p } } }`, a guard that also matches a missing field: the
    // negation of a same-typed comparison; arrays and objects, whose rules are longer, go to mingo.
    const negated = ops.length === 1 && op && op[0] === '$not' && isPlainObject(op[1]) && Object.keys(op[1]).length === 1 ? op[1].$gte : undefined;
    if (typeof negated === 'string' || typeof negated === 'number') {
      let whole: Query | undefined;
      tests.push((doc) => {
        const field = doc[key];
        if (field !== null && typeof field === 'object') return (whole ??= new Query({ [key]: value }, {})).test(doc);
        return !(typeof field === typeof negated && (field as typeof negated) >= negated);
      });
      continue;
    }
    // `{ _position: { $lt: p } }`, the projections' replay guard: a comparison of same-typed scalars.
    if (ops.length !== 1 || !op || op[0] !== '$lt' || (typeof op[1] !== 'string' && typeof op[1] !== 'number')) return undefined;
    const bound = op[1];
    let whole: Query | undefined;
    tests.push((doc) => {
      const field = doc[key];
      // An array matches by its elements: mingo's rules.
      if (field !== null && typeof field === 'object') return (whole ??= new Query({ [key]: value }, {})).test(doc);
      return typeof field === typeof bound && (field as typeof bound) < bound;
    });
  }
  return (doc) => tests.every((t) => t(doc));
}

/** The filter as a test of one document: the plain equalities' own test, else mingo's. */
export function matcherOf(filter: Filter): (doc: Document) => boolean {
  const equality = equalityMatcher(filter);
  if (equality) return equality;
  const query = new Query(filter, {});
  return (doc) => query.test(doc);
}

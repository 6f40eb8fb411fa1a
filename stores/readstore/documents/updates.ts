// MongoDB's update semantics as every adapter applies them: updates checked and cleared of
// `undefined`, the document an upsert inserts, and a document after an update (plainUpdate.ts for
// the plain operators, else mingo).
import { randomUUID } from 'node:crypto';
import { update as applyUpdate } from 'mingo';
import { applyPlainUpdate } from '../plainUpdate';
import type { Document, DocumentId, Filter, Update } from '../readStore';
import { copyDoc, isPlainObject } from './plainObjects';

const NO_OPERATOR = 'An update needs at least one operator';

/**
 * Refuses an update without operators, and answers it without the fields it gives `undefined`: the
 * MongoDB adapter's driver leaves those out of every operator (`ignoreUndefined`), so on every store
 * such a field is left as it is (not deleted, not set to null), and an operator given `undefined` is
 * no operator. The update itself when it gives none.
 */
export function checkedUpdate(update: Update): Update {
  if (Object.keys(update).length === 0) throw new Error(NO_OPERATOR);
  for (const operator in update) {
    const fields: unknown = update[operator as keyof Update];
    if (fields === undefined) return withoutUndefined(update);
    if (isPlainObject(fields)) for (const key in fields) if (fields[key] === undefined) return withoutUndefined(update);
  }
  return update;
}

function withoutUndefined(update: Update): Update {
  const out: Record<string, unknown> = {};
  for (const [operator, fields] of Object.entries(update)) {
    if (fields === undefined) continue;
    out[operator] = isPlainObject(fields) ? Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) : fields;
  }
  if (Object.keys(out).length === 0) throw new Error(NO_OPERATOR);
  return out as Update;
}

type Modifier = Parameters<typeof applyUpdate>[1];

/** Splits `$setOnInsert`, which mingo does not know, from the operators applied on every update. */
function operators(update: Update): Modifier {
  const { $setOnInsert: _ignored, ...rest } = update;
  return rest as Modifier;
}

function isOperatorObject(value: unknown): boolean {
  return isPlainObject(value) && Object.keys(value).some((key) => key.startsWith('$'));
}

/**
 * The document an upsert inserts when nothing matches, as MongoDB builds it: the filter's top-level
 * equality fields (`a: 1`, `'b.c': 2`, `a: { $eq: 1 }`), then `$setOnInsert`, then the other operators.
 * Fields inside `$and`/`$or` do not seed it (FerretDB, which CI runs on, ignores them too). Without an
 * `_id` from the filter or the update it gets a random UUID, so ids stay strings on both adapters.
 * The document is new, sharing nothing with `filter` or `update`, without `undefined` properties.
 */
export function buildUpsertDoc(filter: Filter, update: Update): Document {
  const direct = insertedAsGiven(filter, update);
  if (direct) return direct;
  const seed: Record<string, unknown> = {};
  for (const [path, value] of Object.entries(filter)) {
    if (path.startsWith('$') || path === '_id') continue;
    if (!isOperatorObject(value)) seed[path] = value;
    else if (isPlainObject(value) && Object.keys(value).length === 1 && '$eq' in value) seed[path] = value.$eq;
  }
  // mingo refuses any update of `_id`, even on an empty document, so it is placed here instead.
  const { $setOnInsert = {}, $set = {}, ...others } = update;
  const { _id: _fromSetOnInsert, ...setOnInsert } = $setOnInsert;
  const { _id: _fromSet, ...set } = $set;
  let doc: Record<string, unknown> = {};
  // applyPlainUpdate copies what it sets (without `undefined`s); what mingo built is copied at the end.
  let byMingo = false;
  const apply = (modifier: Update): void => {
    if (!Object.values(modifier).some((fields) => fields && Object.keys(fields).length > 0)) return;
    const plain = applyPlainUpdate(doc as Document, modifier);
    if (plain) doc = plain.next;
    else {
      applyUpdate(doc, modifier as Modifier, undefined, undefined, { cloneMode: 'deep' });
      byMingo = true;
    }
  };
  apply({ $set: seed });
  apply({ $set: setOnInsert });
  apply({ ...others, $set: set });
  const built = { _id: upsertId(filter, update) ?? randomUUID(), ...doc };
  return byMingo ? copyDoc(built) : built;
}

/** A top-level field an insert sets as it is given (no path, no operator, not `_id` or `__proto__`). */
const isTopLevelField = (key: string): boolean => key !== '' && key !== '_id' && key !== '__proto__' && !key.includes('.') && !key.startsWith('$');

/**
 * The projections' inserts (`insertOnce`): a filter of `_id` alone, an update of `$setOnInsert` and
 * `$set` on top-level fields. The document is built field by field, as the general path would build
 * it, without planning an update for it; undefined for any other upsert.
 */
function insertedAsGiven(filter: Filter, update: Update): Document | undefined {
  let id: unknown;
  for (const key in filter) {
    if (key !== '_id') return undefined;
    id = filter[key];
  }
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  for (const op in update) if (op !== '$setOnInsert' && op !== '$set') return undefined;
  const parts = [update.$setOnInsert, update.$set];
  for (const fields of parts) {
    if (fields === undefined) continue;
    if (!isPlainObject(fields)) return undefined;
    for (const key of Object.keys(fields)) if (!isTopLevelField(key)) return undefined;
  }
  const doc: Document = { _id: id };
  for (const fields of parts) {
    if (fields === undefined) continue;
    for (const key of Object.keys(fields)) {
      const value = fields[key];
      // The stores leave undefined values out before (checkedUpdate); given one anyway, this drops
      // the field, as the general path does.
      if (value === undefined) delete doc[key];
      else doc[key] = copyDoc(value);
    }
  }
  return doc;
}

/** The `_id` an upsert would insert under, if the filter or the update fixes one. */
export function upsertId(filter: Filter, update: Update): DocumentId | undefined {
  const fromFilter = filter._id;
  if (typeof fromFilter === 'string' || typeof fromFilter === 'number') return fromFilter;
  if (isPlainObject(fromFilter) && (typeof fromFilter.$eq === 'string' || typeof fromFilter.$eq === 'number')) return fromFilter.$eq;
  for (const op of [update.$setOnInsert, update.$set]) {
    const id = op?._id;
    if (typeof id === 'string' || typeof id === 'number') return id;
  }
  return undefined;
}

/**
 * The document after `update` (an existing document's: `$setOnInsert` does nothing), or undefined
 * when nothing changed. Worked on a copy, so a throwing operator leaves `doc` whole; never mutates it.
 */
export function updatedDoc(doc: Document, update: Update): Document | undefined {
  const plain = applyPlainUpdate(doc, update);
  if (plain) return plain.changed ? plain.next : undefined;
  const next = copyDoc(doc);
  const changed = applyUpdate(next, operators(update), undefined, undefined, { cloneMode: 'deep' });
  return changed.length === 0 ? undefined : copyDoc(next);
}


// The embedded read store: collections held in memory and rebuilt by replaying the log at start.
// Filters, sorts and update operators are evaluated by mingo so that this adapter and the MongoDB
// one answer alike; the contract suite holds both to it.
import { randomUUID } from 'node:crypto';
import { find, Query, update as applyUpdate } from 'mingo';
import { FieldIndexes } from './fieldIndexes';
import { applyPlainUpdate } from './plainUpdate';
import type { Checkpoint, CheckpointWrite, Collection, Document, DocumentId, Filter, FindOptions, ReadStore, Update, UpdateResult, WriteOp } from './readStore';

/** The collection both adapters keep checkpoints in; reserved so a read model cannot collide with it. */
export const CHECKPOINTS_COLLECTION = 'checkpoints';

/**
 * An upsert whose filter matched nothing but whose `_id` is taken (MongoDB's E11000), e.g. a guarded
 * upsert `{ _id, _position: { $lt: p } }` replayed after the document moved on. Both adapters throw it.
 */
export class DuplicateIdError extends Error {
  readonly code = 'DUPLICATE_ID';
  constructor(readonly id: unknown) {
    super(`A document with _id ${JSON.stringify(id)} already exists`);
    this.name = 'DuplicateIdError';
  }
}

export function assertCollectionName(name: string): void {
  if (name === CHECKPOINTS_COLLECTION) throw new Error(`"${CHECKPOINTS_COLLECTION}" is reserved for checkpoints`);
}

export function assertDocumentId(id: unknown): asserts id is DocumentId {
  if (typeof id !== 'string' && typeof id !== 'number') throw new Error(`A document id must be a string or a number, not ${JSON.stringify(id) ?? String(id)}`);
}

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

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
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
 * Sets a property of the object itself: a client's map may hold the key `__proto__` (sample
 * metadata), which an assignment would take for the prototype and drop, while MongoDB stores it.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * A deep copy that drops `undefined` properties, as the MongoDB adapter's driver does
 * (`ignoreUndefined`), so the same writes give the same documents on both.
 */
export function copyDoc<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => copyDoc(item)) as T;
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) if (item !== undefined) setOwn(out, key, copyDoc(item));
    return out as T;
  }
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (value instanceof Uint8Array) return Buffer.from(value) as T;
  return value;
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

function applyFindOptions<T>(docs: T[], filter: Filter, options: FindOptions): T[] {
  let cursor = find<T>(docs, filter);
  if (options.sort && Object.keys(options.sort).length > 0) cursor = cursor.sort(options.sort);
  if (options.skip) cursor = cursor.skip(options.skip);
  // MongoDB reads a limit of 0 as "no limit".
  if (options.limit) cursor = cursor.limit(options.limit);
  return cursor.all();
}

/**
 * The hot lookups (by id, by key hash, by owner) are equalities on top-level fields: tested here
 * without building a mingo Query, whose setup dominates a single-document read. The semantics are
 * MongoDB's for such filters (an array field matches when it holds the value); anything else
 * (operators, dotted paths, nulls, objects) goes to mingo.
 */
type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

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

/** MongoDB's order between the scalar types read models sort on: null < numbers < strings < booleans. */
const typeRank = (v: unknown): number | undefined =>
  v === null || v === undefined ? 0 : typeof v === 'number' ? 1 : typeof v === 'string' ? 2 : typeof v === 'boolean' ? 3 : undefined;

/**
 * Sort, skip and limit without mingo for matches of an equality filter, when every sort key is a
 * top-level field holding a scalar; undefined sends the query to mingo.
 */
function plainFind(docs: Document[], options: FindOptions): Document[] | undefined {
  const keys = Object.entries(options.sort ?? {});
  if (keys.some(([key]) => key.includes('.') || key.startsWith('$'))) return undefined;
  if (keys.length > 0) {
    for (const doc of docs) for (const [key] of keys) if (typeRank(doc[key]) === undefined) return undefined;
    // Array.prototype.sort is stable: ties keep insertion order, as mingo's sort does.
    docs = [...docs].sort((a, b) => {
      for (const [key, direction] of keys) {
        const x = a[key];
        const y = b[key];
        const rx = typeRank(x)!;
        const ry = typeRank(y)!;
        const order = rx !== ry ? rx - ry : rx === 0 ? 0 : (x as string | number | boolean) < (y as string | number | boolean) ? -1 : (x as string | number | boolean) > (y as string | number | boolean) ? 1 : 0;
        if (order !== 0) return order * direction;
      }
      return 0;
    });
  }
  const start = options.skip ?? 0;
  return options.limit ? docs.slice(start, start + options.limit) : docs.slice(start);
}

/** Collections smaller than this are scanned rather than indexed. */
export const INDEX_AFTER_DOCUMENTS = 256;

class MemoryCollection implements Collection<Document> {
  // Insertion order stands in for MongoDB's natural order (ties in sort, updateOne's pick).
  private readonly docs = new Map<DocumentId, Document>();
  /** Each document's place in that order, to give indexed candidates in it. */
  private readonly order = new Map<DocumentId, number>();
  private nextOrder = 0;
  private readonly indexes: FieldIndexes;

  /** @param changed told of every change to a document, before it shows (the store's change mark). */
  constructor(
    indexAfter: number,
    private readonly changed: () => void,
  ) {
    this.indexes = new FieldIndexes(indexAfter);
  }

  private inOrder(ids: Iterable<DocumentId>): Document[] {
    const known = [...ids].filter((id) => this.docs.has(id));
    known.sort((a, b) => this.order.get(a)! - this.order.get(b)!);
    return known.map((id) => this.docs.get(id)!);
  }

  /**
   * Candidates for a filter, in natural order: a lookup when it pins `_id`, the documents an
   * equality index gives for one of its top-level scalar fields, else a scan.
   */
  private candidates(filter: Filter): Document[] {
    const id = filter._id;
    if (typeof id === 'string' || typeof id === 'number') {
      const doc = this.docs.get(id);
      return doc ? [doc] : [];
    }
    if (isPlainObject(id) && Object.keys(id).length === 1 && Array.isArray(id.$in) && id.$in.every(isScalar)) return this.inOrder(new Set(id.$in as DocumentId[]));
    let narrowest: ReadonlySet<DocumentId> | undefined;
    for (const [field, value] of Object.entries(filter)) {
      if (field.startsWith('$') || field.includes('.') || !isScalar(value)) continue;
      const ids = this.indexes.lookup(field, value, this.docs);
      if (ids && (!narrowest || ids.size < narrowest.size)) narrowest = ids;
    }
    return narrowest ? this.inOrder(narrowest) : [...this.docs.values()];
  }

  private insertDoc(doc: Document): void {
    this.changed();
    this.docs.set(doc._id, doc);
    this.order.set(doc._id, this.nextOrder++);
    this.indexes.added(doc);
  }

  private replaceDoc(before: Document, after: Document): void {
    this.changed();
    this.docs.set(after._id, after);
    this.indexes.replaced(before, after);
  }

  private deleteDoc(doc: Document): boolean {
    this.changed();
    if (!this.docs.delete(doc._id)) return false;
    this.order.delete(doc._id);
    this.indexes.removed(doc);
    return true;
  }

  private matching(filter: Filter): Document[] {
    const test = equalityMatcher(filter) ?? ((q: Query) => (doc: Document) => q.test(doc))(new Query(filter, {}));
    return this.candidates(filter).filter(test);
  }

  async find(filter: Filter = {}, options: FindOptions = {}): Promise<Document[]> {
    const test = equalityMatcher(filter);
    const sorted = test ? plainFind(this.candidates(filter).filter(test), options) : undefined;
    return (sorted ?? applyFindOptions(this.candidates(filter), filter, options)).map((doc) => copyDoc(doc));
  }

  async findOne(filter: Filter): Promise<Document | null> {
    const [doc] = this.matching(filter);
    return doc ? copyDoc(doc) : null;
  }

  async count(filter: Filter = {}): Promise<number> {
    return this.matching(filter).length;
  }

  async updateOne(filter: Filter, given: Update, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    const update = checkedUpdate(given);
    const [doc] = this.matching(filter);
    if (doc) return { matched: 1, modified: this.apply(doc, update) ? 1 : 0, upserted: false };
    if (!options.upsert) return { matched: 0, modified: 0, upserted: false };
    const created = copyDoc(buildUpsertDoc(filter, update));
    if (this.docs.has(created._id)) throw new DuplicateIdError(created._id);
    this.insertDoc(created);
    return { matched: 0, modified: 0, upserted: true };
  }

  async updateMany(filter: Filter, given: Update): Promise<UpdateResult> {
    const update = checkedUpdate(given);
    const docs = this.matching(filter);
    let modified = 0;
    for (const doc of docs) if (this.apply(doc, update)) modified++;
    return { matched: docs.length, modified, upserted: false };
  }

  async deleteOne(filter: Filter): Promise<number> {
    const [doc] = this.matching(filter);
    return doc && this.deleteDoc(doc) ? 1 : 0;
  }

  async deleteMany(filter: Filter): Promise<number> {
    const docs = this.matching(filter);
    for (const doc of docs) this.deleteDoc(doc);
    return docs.length;
  }

  private apply(doc: Document, update: Update): boolean {
    const next = updatedDoc(doc, update);
    if (next) this.replaceDoc(doc, next);
    return next !== undefined;
  }

  /** Replaces the document with this `_id` by a copy of `doc`, or inserts it (at the end of the natural order). */
  put(doc: Document): void {
    const before = this.docs.get(doc._id);
    const copy = copyDoc(doc);
    if (before) this.replaceDoc(before, copy);
    else this.insertDoc(copy);
  }

  remove(id: DocumentId): void {
    const doc = this.docs.get(id);
    if (doc) this.deleteDoc(doc);
  }

  clear(): void {
    this.changed();
    this.docs.clear();
    this.order.clear();
    this.indexes.clear();
  }
}

export class MemoryReadStore implements ReadStore {
  private readonly collections = new Map<string, MemoryCollection>();
  private readonly checkpoints = new Map<string, Checkpoint>();
  private changes = 0;
  private readonly noteChange = () => {
    this.changes++;
  };

  /** @param options.indexAfter collection size from which equality queries build indexes (tests lower it). */
  constructor(private readonly options: { indexAfter?: number } = {}) {}

  collection<T extends Document = Document>(name: string): Collection<T> {
    // One untyped map holds every collection; the caller names the document type it stored.
    return this.named(name) as Collection<T>;
  }

  private named(name: string): MemoryCollection {
    assertCollectionName(name);
    let collection = this.collections.get(name);
    if (!collection) {
      collection = new MemoryCollection(this.options.indexAfter ?? INDEX_AFTER_DOCUMENTS, this.noteChange);
      this.collections.set(name, collection);
    }
    return collection;
  }

  /** Every document change counts: this process holds every write there is. */
  changeMark(): number {
    return this.changes;
  }

  async getCheckpoint(name: string): Promise<bigint | undefined> {
    return this.checkpoints.get(name)?.position;
  }

  async readCheckpoint(name: string): Promise<Checkpoint | undefined> {
    const checkpoint = this.checkpoints.get(name);
    return checkpoint && { ...checkpoint };
  }

  async setCheckpoint(name: string, position: bigint, store?: string): Promise<void> {
    this.checkpoints.set(name, store === undefined ? { position } : { position, store });
  }

  async commit(ops: readonly WriteOp[], checkpoints: readonly CheckpointWrite[]): Promise<void> {
    // Checked first, so a bad op changes nothing.
    for (const op of ops) {
      assertCollectionName(op.collection);
      assertDocumentId(op.kind === 'put' ? op.doc._id : op.id);
    }
    for (const op of ops) {
      const collection = this.named(op.collection);
      if (op.kind === 'put') collection.put(op.doc);
      else collection.remove(op.id);
    }
    for (const c of checkpoints) await this.setCheckpoint(c.name, c.position, c.store);
  }

  /** In natural (insertion) order, copies as every read gives. */
  async *walk(name: string, pageSize: number): AsyncIterable<Document[]> {
    const docs = await this.named(name).find();
    for (let at = 0; at < docs.length; at += pageSize) yield docs.slice(at, at + pageSize);
  }

  async dropAll(): Promise<void> {
    // Clear rather than forget: handles already given out must see the rebuilt collections.
    for (const collection of this.collections.values()) collection.clear();
    this.checkpoints.clear();
  }

  async close(): Promise<void> {}
}

// The embedded read store: collections held in memory and rebuilt by replaying the log at start.
// Filters, sorts and update operators are evaluated by mingo so that this adapter and the MongoDB
// one answer alike; the contract suite holds both to it.
import { find, Query } from 'mingo';
import { assertCollectionName, assertDocumentId, DuplicateIdError } from './documents/collectionNames';
import { equalityMatcher, isScalar } from './documents/equalityMatcher';
import { copyDoc, isPlainObject } from './documents/plainObjects';
import { buildUpsertDoc, checkedUpdate, updatedDoc } from './documents/updates';
import { FieldIndexes } from './fieldIndexes';
import type { Checkpoint, CheckpointWrite, Collection, Document, DocumentId, Filter, FindOptions, ReadStore, Update, UpdateResult, WriteOp } from './readStore';

function applyFindOptions<T>(docs: T[], filter: Filter, options: FindOptions): T[] {
  let cursor = find<T>(docs, filter);
  if (options.sort && Object.keys(options.sort).length > 0) cursor = cursor.sort(options.sort);
  if (options.skip) cursor = cursor.skip(options.skip);
  // MongoDB reads a limit of 0 as "no limit".
  if (options.limit) cursor = cursor.limit(options.limit);
  return cursor.all();
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

// The writes of a batch of events, held in memory and committed at once: handlers keep the
// Collection API, the buffer loads a document on first touch, applies the updates to it here (the
// memory store's code: plainUpdate, else mingo), answers reads from what it holds, and gives the
// touched documents back as whole-document ops for one ReadStore.commit with the checkpoints.
//
// It holds the collections its projection declares, which no other projection touches: its puts are
// whole documents built on the copy it loaded, so no one else may write those documents between the
// load and the commit. Any other collection throws: a projection learns what it needs from events,
// so that it can be rebuilt alone, anywhere.
//
// Only operations aimed at one document by `_id` are answered from the buffer. Any other
// (updateMany over a field, find over a field, ...) cannot be answered exactly from a partial copy
// of the collection: the collection's pending writes are flushed first and the operation runs
// directly on the store, and what the buffer held of that collection is forgotten. Correctness
// over speed; the projections' hot handlers address documents by `_id`.
import { Query } from 'mingo';
import { DuplicateIdError } from './documents/collectionNames';
import { equalityMatcher } from './documents/equalityMatcher';
import { copyDoc, isPlainObject } from './documents/plainObjects';
import { buildUpsertDoc, checkedUpdate, updatedDoc } from './documents/updates';
import type { Checkpoint, Collection, Document, DocumentId, Filter, FindOptions, ReadStore, Update, UpdateResult, WriteOp } from './readStore';

interface Entry {
  /** The document as the batch left it; null when it does not exist. */
  doc: Document | null;
  /** Changed by the batch: to be written. */
  dirty: boolean;
}

interface Overlay {
  readonly name: string;
  entries: Map<DocumentId, Entry>;
  /** Bumped when the entries are dropped (after a direct write), so older undo records are void. */
  generation: number;
}

interface Undo {
  overlay: Overlay;
  generation: number;
  id: DocumentId;
  previous: Entry | undefined;
}

/** The `_id` a filter pins with an equality, if it does. */
function pinnedId(filter: Filter): DocumentId | undefined {
  const id = filter._id;
  if (typeof id === 'string' || typeof id === 'number') return id;
  if (isPlainObject(id) && Object.keys(id).length === 1 && (typeof id.$eq === 'string' || typeof id.$eq === 'number')) return id.$eq;
  return undefined;
}

/**
 * One top-level condition of the projections' guarded writes, decided as the memory store's matcher
 * decides it: an equality, `$lt` or `$not: { $gte }` on a scalar field. Undefined for anything else
 * (an object or array field under a comparison, other operators), which the whole filter then
 * leaves to that matcher or mingo.
 */
function guard(doc: Document, key: string, condition: unknown): boolean | undefined {
  if (key.startsWith('$') || key.includes('.')) return undefined;
  const field = doc[key];
  if (typeof condition === 'string' || typeof condition === 'number' || typeof condition === 'boolean') {
    return field === condition || (Array.isArray(field) && field.includes(condition));
  }
  if (!isPlainObject(condition) || (field !== null && typeof field === 'object')) return undefined;
  let op: string | undefined;
  for (const k in condition) {
    if (op !== undefined) return undefined;
    op = k;
  }
  if (op === '$lt') {
    const bound = condition.$lt;
    if (typeof bound !== 'string' && typeof bound !== 'number') return undefined;
    return typeof field === typeof bound && (field as typeof bound) < bound;
  }
  if (op === '$not' && isPlainObject(condition.$not)) {
    let only = true;
    for (const k in condition.$not) if (k !== '$gte') only = false;
    const negated = condition.$not.$gte;
    if (!only || (typeof negated !== 'string' && typeof negated !== 'number')) return undefined;
    return !(typeof field === typeof negated && (field as typeof negated) >= negated);
  }
  return undefined;
}

/**
 * Whether `doc` matches `filter`, as the memory store decides it: the guards tested in place (a
 * write per handler and document; the matcher's closures were a twentieth of a rebuild's
 * allocations), else its matcher, else mingo.
 */
function matches(doc: Document, filter: Filter): boolean {
  for (const key in filter) {
    if (key === '_id') continue; // pinned by _id, and found by it
    const verdict = guard(doc, key, filter[key]);
    if (verdict === false) return false;
    if (verdict === undefined) {
      const test = equalityMatcher(filter);
      return test ? test(doc) : new Query(filter, {}).test(doc);
    }
  }
  return true;
}

export class WriteBuffer implements ReadStore {
  private readonly overlays = new Map<string, Overlay>();
  /** Handlers ask for their collections at every event: each is made once per buffer. */
  private readonly collections = new Map<string, Collection>();
  private undo: Undo[] = [];

  /**
   * @param store where documents are read from and direct operations run
   * @param writer the projection whose writes it holds, named when it writes what it does not declare
   * @param writes the collections it buffers, the projection's own
   * @param flush writes pending ops (without checkpoints) before a direct operation
   */
  constructor(
    private readonly store: ReadStore,
    private readonly writer: string,
    private readonly writes: ReadonlySet<string>,
    private readonly flush: (ops: readonly WriteOp[]) => Promise<void>,
  ) {}

  collection<T extends Document = Document>(name: string): Collection<T> {
    let collection = this.collections.get(name);
    if (!collection) {
      // The store checks the name (reserved names throw) as it would for a direct write.
      const direct = this.store.collection(name);
      if (this.writes.has(name)) {
        const overlay: Overlay = { name, entries: new Map(), generation: 0 };
        this.overlays.set(name, overlay);
        collection = new BufferedCollection(this, overlay, direct);
      } else collection = refused(new Error(`Projection ${this.writer} uses the collection ${name}, which it does not declare: a projection reads and writes only its own`));
      this.collections.set(name, collection);
    }
    return collection as unknown as Collection<T>;
  }

  /** A point to roll back to: the buffer as it is now. */
  savepoint(): number {
    return this.undo.length;
  }

  /** Forgets the changes made since `savepoint` (those already flushed to the store stay there). */
  rollback(savepoint: number): void {
    while (this.undo.length > savepoint) {
      const record = this.undo.pop()!;
      if (record.generation !== record.overlay.generation) continue;
      if (record.previous) record.overlay.entries.set(record.id, record.previous);
      else record.overlay.entries.delete(record.id);
    }
  }

  /** The pending writes, one op per changed document, grouped by collection; the buffer is then clean. */
  takeOps(): WriteOp[] {
    const ops: WriteOp[] = [];
    for (const overlay of this.overlays.values()) ops.push(...this.takeOpsOf(overlay));
    this.undo = [];
    return ops;
  }

  private takeOpsOf(overlay: Overlay): WriteOp[] {
    const ops: WriteOp[] = [];
    for (const [id, entry] of overlay.entries) {
      if (!entry.dirty) continue;
      ops.push(entry.doc ? { kind: 'put', collection: overlay.name, doc: entry.doc } : { kind: 'delete', collection: overlay.name, id });
      overlay.entries.set(id, { doc: entry.doc, dirty: false });
    }
    return ops;
  }

  hasPending(overlay: Overlay): boolean {
    for (const entry of overlay.entries.values()) if (entry.dirty) return true;
    return false;
  }

  /** Writes the collection's pending ops so a direct read of the store sees them. */
  async flushCollection(overlay: Overlay): Promise<void> {
    if (!this.hasPending(overlay)) return;
    await this.flush(this.takeOpsOf(overlay));
  }

  /** Before a direct write: pending ops go first, and what the buffer holds of the collection is forgotten. */
  async beforeDirectWrite(overlay: Overlay): Promise<void> {
    await this.flushCollection(overlay);
    overlay.entries = new Map();
    overlay.generation += 1;
  }

  /** The document as the batch sees it, loaded from the store on first touch (a promise only then). */
  get(overlay: Overlay, direct: Collection, id: DocumentId): Document | null | Promise<Document | null> {
    const held = overlay.entries.get(id);
    return held ? held.doc : this.load(overlay, direct, id);
  }

  private async load(overlay: Overlay, direct: Collection, id: DocumentId): Promise<Document | null> {
    const loaded = await direct.findOne({ _id: id });
    // Loading races nothing: a lane's documents have one writer, its own buffer.
    if (!overlay.entries.has(id)) overlay.entries.set(id, { doc: loaded, dirty: false });
    return overlay.entries.get(id)!.doc;
  }

  set(overlay: Overlay, id: DocumentId, doc: Document | null): void {
    this.undo.push({ overlay, generation: overlay.generation, id, previous: overlay.entries.get(id) });
    overlay.entries.set(id, { doc, dirty: true });
  }

  getCheckpoint(name: string): Promise<bigint | undefined> {
    return this.store.getCheckpoint(name);
  }

  readCheckpoint(name: string): Promise<Checkpoint | undefined> {
    return this.store.readCheckpoint(name);
  }

  async setCheckpoint(): Promise<void> {
    throw new Error('Checkpoints are stored by the runner with the batch, not by a handler');
  }

  async commit(): Promise<void> {
    throw new Error('A batch is committed by the runner, not by a handler');
  }

  async dropAll(): Promise<void> {
    throw new Error('A handler cannot drop the read models');
  }

  async *walk(): AsyncIterable<Document[]> {
    throw new Error('A handler cannot walk whole collections');
  }

  async close(): Promise<void> {}
}

class BufferedCollection implements Collection<Document> {
  constructor(
    private readonly buffer: WriteBuffer,
    private readonly overlay: Overlay,
    private readonly direct: Collection,
  ) {}

  private async pinned(filter: Filter): Promise<Document | null> {
    const doc = await this.buffer.get(this.overlay, this.direct, pinnedId(filter)!);
    return doc && matches(doc, filter) ? doc : null;
  }

  async find(filter: Filter = {}, options: FindOptions = {}): Promise<Document[]> {
    if (pinnedId(filter) !== undefined) {
      const doc = await this.pinned(filter);
      return doc && !options.skip ? [copyDoc(doc)] : [];
    }
    await this.buffer.flushCollection(this.overlay);
    return this.direct.find(filter, options);
  }

  async findOne(filter: Filter): Promise<Document | null> {
    if (pinnedId(filter) !== undefined) {
      const doc = await this.pinned(filter);
      return doc && copyDoc(doc);
    }
    await this.buffer.flushCollection(this.overlay);
    return this.direct.findOne(filter);
  }

  async count(filter: Filter = {}): Promise<number> {
    if (pinnedId(filter) !== undefined) return (await this.pinned(filter)) ? 1 : 0;
    await this.buffer.flushCollection(this.overlay);
    return this.direct.count(filter);
  }

  async updateOne(filter: Filter, given: Update, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    const id = pinnedId(filter);
    if (id === undefined) {
      await this.buffer.beforeDirectWrite(this.overlay);
      return this.direct.updateOne(filter, given, options);
    }
    const update = checkedUpdate(given);
    // The projections' hot path: awaited only when the document is loaded, not when the batch holds it.
    const got = this.buffer.get(this.overlay, this.direct, id);
    const held = got instanceof Promise ? await got : got;
    const doc = held && matches(held, filter) ? held : null;
    if (doc) return { matched: 1, modified: this.apply(doc, update) ? 1 : 0, upserted: false };
    if (!options.upsert) return { matched: 0, modified: 0, upserted: false };
    const created = buildUpsertDoc(filter, update);
    // The filter pinned the id but did not match: a document with it exists under other values.
    if (held !== null) throw new DuplicateIdError(created._id);
    this.buffer.set(this.overlay, created._id, created);
    return { matched: 0, modified: 0, upserted: true };
  }

  async updateMany(filter: Filter, given: Update): Promise<UpdateResult> {
    if (pinnedId(filter) === undefined) {
      await this.buffer.beforeDirectWrite(this.overlay);
      return this.direct.updateMany(filter, given);
    }
    const update = checkedUpdate(given);
    const doc = await this.pinned(filter);
    return doc ? { matched: 1, modified: this.apply(doc, update) ? 1 : 0, upserted: false } : { matched: 0, modified: 0, upserted: false };
  }

  async deleteOne(filter: Filter): Promise<number> {
    if (pinnedId(filter) === undefined) {
      await this.buffer.beforeDirectWrite(this.overlay);
      return this.direct.deleteOne(filter);
    }
    const doc = await this.pinned(filter);
    if (!doc) return 0;
    this.buffer.set(this.overlay, doc._id, null);
    return 1;
  }

  async deleteMany(filter: Filter): Promise<number> {
    if (pinnedId(filter) === undefined) {
      await this.buffer.beforeDirectWrite(this.overlay);
      return this.direct.deleteMany(filter);
    }
    return this.deleteOne(filter);
  }

  private apply(doc: Document, update: Update): boolean {
    const next = updatedDoc(doc, update);
    if (next) this.buffer.set(this.overlay, doc._id, next);
    return next !== undefined;
  }
}

/** Another projection's collection. */
function refused(error: Error): Collection {
  const refuse = () => Promise.reject(error);
  return { find: refuse, findOne: refuse, count: refuse, updateOne: refuse, updateMany: refuse, deleteOne: refuse, deleteMany: refuse };
}

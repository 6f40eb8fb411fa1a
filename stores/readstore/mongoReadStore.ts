// The production read store on MongoDB (CI runs it on FerretDB 1.24). No transactions and no change
// streams, which FerretDB lacks. FerretDB also gets some MQL wrong; this adapter works around it so
// that it answers like the memory adapter (same MQL, evaluated there by mingo):
// - `$elemMatch` with field conditions (`{ items: { $elemMatch: { k: 2 } } }`) matches nothing or
//   errors: such top-level clauses are left off the server query and tested here with mingo.
// - `$pull` only removes elements equal to the value (`$pull: { a: { $gt: 1 } }` is a no-op) and
//   `$push` ignores `$slice`/`$sort`/`$position`: the new array is computed here with mingo and
//   written with `$set`, guarded by the old array, retrying if it changed meanwhile.
// - `$setOnInsert` skips fields whose value is null or an empty array: an upsert that inserted sets
//   them with `$set` right after (a reader may see the document a moment without them).
// - An update is a read then a replace, so concurrent updates of one document lose all but one
//   (20 concurrent `$inc: 1` gave 6). Writes through one store are queued per collection, which
//   also makes the read-then-write fallbacks above atomic within a process. Across processes only
//   MongoDB is safe, which is enough: a read model has one writer, its projection runner.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { Query, update as applyUpdate } from 'mingo';
import {
  MongoClient,
  MongoServerError,
  type Collection as MongoCollection,
  type AnyBulkWriteOperation,
  type Db,
  type Filter as MongoFilter,
  type UpdateFilter,
} from 'mongodb';
import type { Checkpoint, CheckpointWrite, Collection, Document, Filter, FindOptions, ReadStore, Update, UpdateResult, WriteOp } from './readStore';
import { assertCollectionName, assertDocumentId, CHECKPOINTS_COLLECTION, DuplicateIdError } from './documents/collectionNames';
import { copyDoc, isPlainObject } from './documents/plainObjects';
import { buildUpsertDoc, checkedUpdate, upsertId } from './documents/updates';

const DEFAULT_DB = 'edgeml_read';
/** How often a fallback update re-reads a document that changed under it before giving up. */
const MAX_ATTEMPTS = 10;

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

interface FilterPlan {
  /** What the server evaluates: the filter, less the top-level clauses it would get wrong. */
  server: MongoFilter<Document>;
  /** Set when clauses were left off: the whole filter, tested here on what the server returns. */
  residual?: Query;
}

function planFilter(filter: Filter): FilterPlan {
  const server: Record<string, unknown> = {};
  let residual = false;
  for (const [key, value] of Object.entries(filter)) {
    if (needsClient({ [key]: value })) residual = true;
    else server[key] = value;
  }
  return residual ? { server, residual: new Query(filter, {}) } : { server };
}

type ClientOps = { $pull?: Record<string, unknown>; $push?: Record<string, unknown> };

/** Splits off the `$pull`/`$push` entries FerretDB would get wrong (see the header). */
function splitUpdate(update: Update): { server: Update; client?: ClientOps } {
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
function droppedOnInsert(update: Update): Record<string, unknown> | undefined {
  const dropped = Object.entries(update.$setOnInsert ?? {}).filter(([, v]) => v === null || (Array.isArray(v) && v.length === 0));
  return dropped.length > 0 ? Object.fromEntries(dropped) : undefined;
}

function getPath(doc: unknown, path: string): unknown {
  let value = doc;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function and(...filters: MongoFilter<Document>[]): MongoFilter<Document> {
  const parts = filters.filter((f) => Object.keys(f).length > 0);
  return parts.length === 1 ? parts[0]! : { $and: parts };
}

async function translateDuplicate<R>(id: unknown, write: () => Promise<R>): Promise<R> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof MongoServerError && error.code === 11000) throw new DuplicateIdError(id);
    throw error;
  }
}

/** The port's update is typed per operator, not per field, so the driver's field-typed form cannot be proven; the server checks it. */
function toMongo(update: Update): UpdateFilter<Document> {
  return update as UpdateFilter<Document>;
}

const NOTHING: UpdateResult = { matched: 0, modified: 0, upserted: false };

/** Runs the writes given to it one after another (see the header for why). */
class WriteQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** @param changing told as each write starts and again as it ends (the store's change mark). */
  constructor(private readonly changing: () => void) {}

  run<R>(write: () => Promise<R>): Promise<R> {
    // Both ends: an answer read while the write was under way, kept under the mark taken then, must
    // not outlive it.
    const result = this.tail.then(async () => {
      this.changing();
      try {
        return await write();
      } finally {
        this.changing();
      }
    });
    this.tail = result.catch(() => undefined);
    return result;
  }
}

class MongoReadCollection implements Collection<Document> {
  constructor(
    private readonly col: MongoCollection<Document>,
    private readonly writes: WriteQueue,
  ) {}

  async find(filter: Filter = {}, options: FindOptions = {}): Promise<Document[]> {
    const plan = planFilter(filter);
    const sort = options.sort && Object.keys(options.sort).length > 0 ? { sort: options.sort } : {};
    if (!plan.residual) {
      const page = { ...(options.skip ? { skip: options.skip } : {}), ...(options.limit ? { limit: options.limit } : {}) };
      return this.col.find(plan.server, { ...sort, ...page }).toArray();
    }
    const docs = await this.matches(plan, sort);
    const start = options.skip ?? 0;
    return options.limit ? docs.slice(start, start + options.limit) : docs.slice(start);
  }

  async findOne(filter: Filter): Promise<Document | null> {
    const [doc] = await this.find(filter, { limit: 1 });
    return doc ?? null;
  }

  async count(filter: Filter = {}): Promise<number> {
    const plan = planFilter(filter);
    if (!plan.residual) return this.col.countDocuments(plan.server);
    return (await this.matches(plan)).length;
  }

  updateOne(filter: Filter, update: Update, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    return this.writes.run(() => this.updateOneNow(filter, update, options));
  }

  private async updateOneNow(filter: Filter, given: Update, options: { upsert?: boolean }): Promise<UpdateResult> {
    // What the driver sends (it leaves undefined fields out): the upsert's document is built from it too.
    const update = checkedUpdate(given);
    try {
      return await this.updateOneOnce(filter, update, options);
    } catch (error) {
      // Two upserts racing on one _id: the loser's insert collides, yet its filter would now match.
      // MongoDB retries such an upsert itself, FerretDB does not; a second collision is a real one.
      if (!(error instanceof DuplicateIdError) || !options.upsert) throw error;
      return this.updateOneOnce(filter, update, options);
    }
  }

  private async updateOneOnce(filter: Filter, update: Update, options: { upsert?: boolean }): Promise<UpdateResult> {
    const plan = planFilter(filter);
    const split = splitUpdate(update);
    if (!plan.residual && !split.client) {
      const id = upsertId(filter, update);
      // Without an _id the server would make an ObjectId; keep ids strings, as the memory adapter does.
      const withId = options.upsert && id === undefined ? { ...update, $setOnInsert: { ...update.$setOnInsert, _id: randomUUID() } } : update;
      const result = await translateDuplicate(id, () =>
        this.col.updateOne(plan.server, toMongo(withId), { upsert: options.upsert ?? false }),
      );
      const dropped = droppedOnInsert(update);
      if (result.upsertedId !== null && dropped) await this.col.updateOne({ _id: result.upsertedId }, { $set: dropped });
      return { matched: result.matchedCount, modified: result.modifiedCount, upserted: result.upsertedCount > 0 };
    }
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const [doc] = await this.matches(plan, {}, 1);
      if (!doc) return options.upsert ? this.insertUpsert(filter, update) : NOTHING;
      const result = await this.updateMatched(doc, plan, split);
      if (result) return result;
    }
    throw new Error(`updateOne gave up: the matching document kept changing (${MAX_ATTEMPTS} attempts)`);
  }

  updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    return this.writes.run(() => this.updateManyNow(filter, update));
  }

  private async updateManyNow(filter: Filter, given: Update): Promise<UpdateResult> {
    const update = checkedUpdate(given);
    const plan = planFilter(filter);
    const split = splitUpdate(update);
    if (!plan.residual && !split.client) {
      const result = await this.col.updateMany(plan.server, toMongo(update));
      return { matched: result.matchedCount, modified: result.modifiedCount, upserted: false };
    }
    const total = { matched: 0, modified: 0, upserted: false };
    for (let doc of await this.matches(plan)) {
      for (let attempt = 0; ; attempt++) {
        const result = await this.updateMatched(doc, plan, split);
        if (result) {
          total.matched += result.matched;
          total.modified += result.modified;
          break;
        }
        if (attempt + 1 >= MAX_ATTEMPTS) throw new Error(`updateMany gave up on _id ${JSON.stringify(doc._id)}: it kept changing`);
        const [again] = await this.matches({ server: and(plan.server, { _id: doc._id }), residual: plan.residual }, {}, 1);
        if (!again) break;
        doc = again;
      }
    }
    return total;
  }

  deleteOne(filter: Filter): Promise<number> {
    return this.writes.run(() => this.deleteOneNow(filter));
  }

  private async deleteOneNow(filter: Filter): Promise<number> {
    const plan = planFilter(filter);
    if (!plan.residual) return (await this.col.deleteOne(plan.server)).deletedCount;
    const [doc] = await this.matches(plan, {}, 1);
    return doc ? (await this.col.deleteOne(and(plan.server, { _id: doc._id }))).deletedCount : 0;
  }

  deleteMany(filter: Filter): Promise<number> {
    return this.writes.run(() => this.deleteManyNow(filter));
  }

  private async deleteManyNow(filter: Filter): Promise<number> {
    const plan = planFilter(filter);
    if (!plan.residual) return (await this.col.deleteMany(plan.server)).deletedCount;
    const ids = (await this.matches(plan)).map((doc) => doc._id);
    return ids.length > 0 ? (await this.col.deleteMany(and(plan.server, { _id: { $in: ids } }))).deletedCount : 0;
  }

  /** Documents the server returns for the plan, tested against the residual filter when there is one. */
  private async matches(plan: FilterPlan, sort: { sort?: Record<string, 1 | -1> } = {}, limit?: number): Promise<Document[]> {
    const out: Document[] = [];
    for await (const doc of this.col.find(plan.server, sort)) {
      if (plan.residual && !plan.residual.test(doc)) continue;
      out.push(doc);
      if (out.length === limit) break;
    }
    return out;
  }

  /**
   * Applies the update to one document read just before: client-side array operators become `$set`s
   * guarded by the array they were computed from. Answers undefined when the document changed meanwhile.
   */
  private async updateMatched(doc: Document, plan: FilterPlan, split: ReturnType<typeof splitUpdate>): Promise<UpdateResult | undefined> {
    // A matched document is never inserted, so $setOnInsert has nothing to do.
    const { $setOnInsert: _ignored, ...server } = split.server;
    const guards: Record<string, unknown> = {};
    if (split.client) {
      const next = copyDoc(doc);
      applyUpdate(next, split.client, undefined, undefined, { cloneMode: 'deep' });
      const $set: Record<string, unknown> = { ...server.$set };
      for (const op of Object.values(split.client)) {
        for (const path of Object.keys(op)) {
          const before = getPath(doc, path);
          const after = getPath(next, path);
          if (isDeepStrictEqual(before, after)) continue;
          $set[path] = after;
          guards[path] = before === undefined ? { $exists: false } : before;
        }
      }
      if (Object.keys($set).length > 0) server.$set = $set;
    }
    if (Object.keys(server).length === 0) return { matched: 1, modified: 0, upserted: false };
    const result = await this.col.updateOne(and(plan.server, { _id: doc._id }, guards), toMongo(server));
    if (result.matchedCount === 0) return undefined;
    return { matched: 1, modified: result.modifiedCount, upserted: false };
  }

  /** The upsert's insert, built here as the memory adapter builds it, since the server was not given the whole filter or update. */
  private async insertUpsert(filter: Filter, update: Update): Promise<UpdateResult> {
    const doc = buildUpsertDoc(filter, update);
    await translateDuplicate(doc._id, () => this.col.insertOne(doc));
    return { matched: 0, modified: 0, upserted: true };
  }
}

interface CheckpointDoc {
  _id: string;
  /** Decimal string: BSON has no integer wide enough for every bigint. */
  position: string;
  /** The identity of the log the position belongs to; absent on checkpoints from before identities. */
  store?: string;
}

function checkpointUpdate(position: bigint, store: string | undefined): UpdateFilter<CheckpointDoc> {
  return store === undefined ? { $set: { position: position.toString() }, $unset: { store: '' } } : { $set: { position: position.toString(), store } };
}

/**
 * How often the change mark looks at the checkpoints for other processes' writes. Every read-model
 * write is a projection runner's, followed by its checkpoint: a change made elsewhere moves this
 * store's mark within this time, or at once when this store reads that checkpoint (waiting for a
 * write to settle does), so read-your-writes holds across processes too.
 */
export const OTHERS_LOOK_MS = 250;

export class MongoReadStore implements ReadStore {
  private changes = 0;
  private readonly noteChange = () => {
    this.changes++;
  };
  private readonly writeQueues = new Map<string, WriteQueue>();
  private readonly checkpointWrites = new WriteQueue(this.noteChange);
  /** Each checkpoint's position as last seen, and the timer that looks at them (from the first changeMark). */
  private readonly seenCheckpoints = new Map<string, string>();
  private othersTimer: NodeJS.Timeout | undefined;
  private looking: Promise<void> | undefined;

  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
  ) {}

  /** `dbName` defaults to one of its own, apart from the GridFS blob store's, since dropAll drops every collection. */
  static async connect(url: string, dbName: string = DEFAULT_DB): Promise<MongoReadStore> {
    // ignoreUndefined: `$set: { a: undefined }` leaves `a` out rather than storing null, as the memory adapter does.
    const client = await MongoClient.connect(url, { ignoreUndefined: true });
    return new MongoReadStore(client, client.db(dbName));
  }

  collection<T extends Document = Document>(name: string): Collection<T> {
    assertCollectionName(name);
    // The caller names the document type it stored; the driver cannot check it either.
    return new MongoReadCollection(this.db.collection<Document>(name), this.queueOf(name)) as Collection<T>;
  }

  private queueOf(name: string): WriteQueue {
    let writes = this.writeQueues.get(name);
    if (!writes) {
      writes = new WriteQueue(this.noteChange);
      this.writeQueues.set(name, writes);
    }
    return writes;
  }

  private get checkpoints(): MongoCollection<CheckpointDoc> {
    return this.db.collection<CheckpointDoc>(CHECKPOINTS_COLLECTION);
  }

  /**
   * Moves with this store's writes at once, and with other processes' within OTHERS_LOOK_MS (see
   * there). The first call starts the look at the checkpoints; close() stops it.
   */
  changeMark(): number {
    if (!this.othersTimer) {
      this.othersTimer = setInterval(() => {
        this.looking ??= this.lookAtCheckpoints().finally(() => (this.looking = undefined));
      }, OTHERS_LOOK_MS);
      this.othersTimer.unref();
    }
    return this.changes;
  }

  private async lookAtCheckpoints(): Promise<void> {
    try {
      const docs = await this.checkpoints.find({}, { projection: { position: 1 } }).toArray();
      const now = new Map(docs.map((doc) => [String(doc._id), String(doc.position)]));
      let moved = now.size !== this.seenCheckpoints.size;
      for (const [name, position] of now) if (this.seenCheckpoints.get(name) !== position) moved = true;
      if (!moved) return;
      this.seenCheckpoints.clear();
      for (const [name, position] of now) this.seenCheckpoints.set(name, position);
      this.noteChange();
    } catch {
      // The store does not answer: what it holds is unknown, so nothing kept stands.
      this.noteChange();
    }
  }

  /** A checkpoint read that shows it moved moves the mark: the writes it covers are in. */
  private sawCheckpoint(name: string, position: string | undefined): void {
    if (position === undefined || this.seenCheckpoints.get(name) === position) return;
    this.seenCheckpoints.set(name, position);
    this.noteChange();
  }

  async getCheckpoint(name: string): Promise<bigint | undefined> {
    return (await this.readCheckpoint(name))?.position;
  }

  async readCheckpoint(name: string): Promise<Checkpoint | undefined> {
    const doc = await this.checkpoints.findOne({ _id: name });
    this.sawCheckpoint(name, doc ? String(doc.position) : undefined);
    if (!doc) return undefined;
    return typeof doc.store === 'string' ? { position: BigInt(doc.position), store: doc.store } : { position: BigInt(doc.position) };
  }

  setCheckpoint(name: string, position: bigint, store?: string): Promise<void> {
    // Queued, so checkpoints land in the order they were set, and retried once like updateOne's upserts.
    return this.checkpointWrites.run(async () => {
      const write = () => this.checkpoints.updateOne({ _id: name }, checkpointUpdate(position, store), { upsert: true });
      try {
        await write();
      } catch (error) {
        if (!(error instanceof MongoServerError && error.code === 11000)) throw error;
        await write();
      }
    });
  }

  async commit(ops: readonly WriteOp[], checkpoints: readonly CheckpointWrite[]): Promise<void> {
    for (const op of ops) {
      assertCollectionName(op.collection);
      assertDocumentId(op.kind === 'put' ? op.doc._id : op.id);
    }
    // Runs of ops on one collection, each an ordered bulkWrite queued with that collection's writes.
    for (let start = 0; start < ops.length; ) {
      const name = ops[start]!.collection;
      let end = start;
      while (end < ops.length && ops[end]!.collection === name) end++;
      const run = ops.slice(start, end).map((op): AnyBulkWriteOperation<Document> =>
        op.kind === 'put'
          ? { replaceOne: { filter: { _id: op.doc._id }, replacement: op.doc, upsert: true } }
          : { deleteOne: { filter: { _id: op.id } } },
      );
      await this.queueOf(name).run(() => this.db.collection<Document>(name).bulkWrite(run, { ordered: true }));
      start = end;
    }
    if (checkpoints.length === 1) await this.setCheckpoint(checkpoints[0]!.name, checkpoints[0]!.position, checkpoints[0]!.store);
    else if (checkpoints.length > 1) {
      // One round trip for the lane's checkpoints, queued with the others so they land in order.
      const writes = checkpoints.map((c): AnyBulkWriteOperation<CheckpointDoc> => ({ updateOne: { filter: { _id: c.name }, update: checkpointUpdate(c.position, c.store), upsert: true } }));
      await this.checkpointWrites.run(() => this.checkpoints.bulkWrite(writes, { ordered: true }));
    }
  }

  /** By `_id`, through its index, one cursor batch a page. */
  async *walk(name: string, pageSize: number): AsyncIterable<Document[]> {
    assertCollectionName(name);
    const cursor = this.db.collection<Document>(name).find({}, { sort: { _id: 1 }, batchSize: pageSize });
    try {
      let page: Document[] = [];
      for await (const doc of cursor) {
        page.push(doc);
        if (page.length === pageSize) {
          yield page;
          page = [];
        }
      }
      if (page.length > 0) yield page;
    } finally {
      await cursor.close();
    }
  }

  async dropAll(): Promise<void> {
    this.noteChange();
    const collections = await this.db.listCollections({}, { nameOnly: true }).toArray();
    for (const { name } of collections) {
      if (!name.startsWith('system.')) await this.db.dropCollection(name);
    }
    this.noteChange();
  }

  async close(): Promise<void> {
    clearInterval(this.othersTimer);
    await this.looking;
    await this.client.close();
  }
}

// The production read store on MongoDB (CI runs it on FerretDB 1.24). No transactions and no change
// streams, which FerretDB lacks. FerretDB also gets some MQL wrong; the collections work around it
// (mongo/ferretDbGaps.ts) so that they answer like the memory adapter. Writes through one store are
// queued per collection (mongo/writeQueue.ts). Across processes only MongoDB is safe, which is
// enough: a read model has one writer, its projection runner.
import {
  MongoClient,
  MongoServerError,
  type Collection as MongoCollection,
  type AnyBulkWriteOperation,
  type Db,
  type UpdateFilter,
} from 'mongodb';
import type { Checkpoint, CheckpointWrite, Collection, Document, ReadStore, WriteOp } from './readStore';
import { assertCollectionName, assertDocumentId, CHECKPOINTS_COLLECTION } from './documents/collectionNames';
import { MongoReadCollection } from './mongo/mongoReadCollection';
import { WriteQueue } from './mongo/writeQueue';

const DEFAULT_DB = 'edgeml_read';

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

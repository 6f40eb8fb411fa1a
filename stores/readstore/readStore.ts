// The read store port: a small MongoDB-flavoured interface. The memory adapter evaluates the
// same filters and update operators with mingo, so both adapters answer alike; the contract suite
// (test/stores/readStore.contract.ts) holds them to it. No transactions and no change streams:
// FerretDB, on which CI runs the MongoDB adapter, has neither.

export type DocumentId = string | number;
export type Document = { _id: DocumentId } & Record<string, unknown>;

/** A MongoDB query filter (`{ a: 1, b: { $in: [...] } }`). */
export type Filter = Record<string, unknown>;

/** A MongoDB update document using only `$set`, `$inc`, `$push`, `$pull`, `$unset`, `$setOnInsert`. */
export type Update = Partial<Record<'$set' | '$inc' | '$push' | '$pull' | '$unset' | '$setOnInsert', Record<string, unknown>>>;

export interface FindOptions {
  sort?: Record<string, 1 | -1>;
  skip?: number;
  limit?: number;
}

export interface UpdateResult {
  matched: number;
  modified: number;
  /** True when an upsert inserted a new document. */
  upserted: boolean;
}

export interface Collection<T extends Document = Document> {
  /**
   * The documents read are the reader's to look at, not to change: a store may hand the same
   * document to every reader, deep-frozen (the SQLite store's kept answers), so a change throws.
   * The array itself is the reader's own.
   */
  find(filter?: Filter, options?: FindOptions): Promise<T[]>;
  /** As find: the document is not to be changed. */
  findOne(filter: Filter): Promise<T | null>;
  count(filter?: Filter): Promise<number>;
  /** Updates the first matching document; with `upsert`, inserts one built from the filter's equality fields and the update when none matches. */
  updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult>;
  updateMany(filter: Filter, update: Update): Promise<UpdateResult>;
  deleteOne(filter: Filter): Promise<number>;
  deleteMany(filter: Filter): Promise<number>;
}

/** A log position and the identity of the log it belongs to (EventStore.identity()). */
export interface Checkpoint {
  position: bigint;
  /** Absent on checkpoints stored before logs had identities. */
  store?: string;
}

/** One document's final state after a batch: written whole, or gone. */
export type WriteOp =
  | { kind: 'put'; collection: string; doc: Document } // replace the whole document by _id, inserting it if absent
  | { kind: 'delete'; collection: string; id: DocumentId };

/** A checkpoint to store with a batch's changes (see ReadStore.setCheckpoint). */
export interface CheckpointWrite {
  name: string;
  position: bigint;
  store?: string;
}

/** Told that the writes since the last durable commit are gone, and which checkpoints remain. */
export type CommitLostListener = (error: unknown, durable: ReadonlyMap<string, bigint>) => void;

export interface ReadStore {
  collection<T extends Document = Document>(name: string): Collection<T>;
  /** The last log position a projection (or saga) has fully applied; undefined before its first event. */
  getCheckpoint(name: string): Promise<bigint | undefined>;
  /** The same checkpoint with the identity of its log. */
  readCheckpoint(name: string): Promise<Checkpoint | undefined>;
  /** Stores the position with the identity of its log; without `store`, with none. */
  setCheckpoint(name: string, position: bigint, store?: string): Promise<void>;
  /**
   * Applies the ops in order, then stores the checkpoints: in one transaction where the store has
   * them (SQLite); MongoDB: one ordered bulkWrite per run of ops of one collection, then the
   * checkpoints (a crash in between replays the batch, which the projections' guards make harmless);
   * memory: directly.
   */
  commit(ops: readonly WriteOp[], checkpoints: readonly CheckpointWrite[]): Promise<void>;
  /**
   * A number that differs from any earlier one whenever a document may have changed since (this
   * process's writes, and other processes' commits where the store can see them), for answers kept
   * while the read models stand still. Absent where the store cannot tell (MongoDB: other
   * processes write unseen).
   */
  changeMark?(): number;
  /**
   * Where writes that succeeded can still be lost (SQLite's group commit: a commit at the window's
   * end that fails, on a full disk): calls `listener` once they are, with the checkpoints that are
   * durable, so that a subscription goes back to them; answers the call that stops listening.
   */
  onCommitLost?(listener: CommitLostListener): () => void;
  /**
   * Where another connection sees writes only once they are committed (SQLite): calls `listener` after
   * each commit of this store's (the projections' thread of THREAD_ROLES then tells the serving thread
   * how far its read models go); answers the call that stops listening.
   */
  onCommitted?(listener: () => void): () => void;
  /** Where writes are committed in group windows (SQLite): commits the open window now. */
  commitGroup?(): void;
  /**
   * Every document of a collection, a page of at most `pageSize` at a time, in an order the store
   * chooses (its cheapest), each page costing about its own size whatever the collection's: for
   * walks of whole collections (comparing read models with a rebuild). Documents written meanwhile
   * may or may not show.
   */
  walk(collection: string, pageSize: number): AsyncIterable<Document[]>;
  /**
   * Leaves no copy of what was deleted or replaced so far in the store's own files: SQLite zeroes
   * deleted content as it goes (secure_delete), and here truncates its write-ahead log, which keeps
   * earlier versions of the pages. Answers false when readers kept the log from being truncated.
   * Absent where there is nothing to scrub (memory) or the files are the server's (MongoDB).
   */
  scrubDeleted?(): Promise<boolean>;
  /** Drops every collection and checkpoint, for a rebuild from the log. */
  dropAll(): Promise<void>;
  close(): Promise<void>;
}

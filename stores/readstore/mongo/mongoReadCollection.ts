// A collection of the MongoDB read store: queries and updates sent to the server where it evaluates
// them right, else evaluated here around what it gets wrong (ferretDbGaps.ts); every write queued
// with the collection's others (writeQueue.ts).
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { update as applyUpdate } from 'mingo';
import { MongoServerError, type Collection as MongoCollection, type UpdateFilter } from 'mongodb';
import { DuplicateIdError } from '../documents/collectionNames';
import { copyDoc } from '../documents/plainObjects';
import { buildUpsertDoc, checkedUpdate, upsertId } from '../documents/updates';
import type { Collection, Document, Filter, FindOptions, Update, UpdateResult } from '../readStore';
import { and, droppedOnInsert, getPath, planFilter, splitUpdate, type FilterPlan } from './ferretDbGaps';
import type { WriteQueue } from './writeQueue';

/** How often a fallback update re-reads a document that changed under it before giving up. */
const MAX_ATTEMPTS = 10;

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

export class MongoReadCollection implements Collection<Document> {
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

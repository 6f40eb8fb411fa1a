// A collection of the SQLite read store: reads through the cached reads, each write atomic in a
// transaction (or a savepoint of the open group, see commits.ts).
import { DuplicateIdError } from '../documents/collectionNames';
import { copyDoc } from '../documents/plainObjects';
import { buildUpsertDoc, checkedUpdate, updatedDoc } from '../documents/updates';
import type { Collection, Document, Filter, FindOptions, Update, UpdateResult } from '../readStore';
import type { CachedReads } from './cachedReads';
import type { Commits } from './commits';
import type { Queries } from './queries';
import type { RowWrites } from './rowWrites';

export class SqliteCollection implements Collection<Document> {
  constructor(
    private readonly name: string,
    private readonly reads: CachedReads,
    private readonly queries: Queries,
    private readonly rows: RowWrites,
    private readonly commits: Commits,
  ) {}

  async find(filter: Filter = {}, options: FindOptions = {}): Promise<Document[]> {
    return this.reads.readMany(this.name, filter, options);
  }

  async findOne(filter: Filter): Promise<Document | null> {
    return this.reads.read(this.name, filter, { limit: 1 })[0] ?? null;
  }

  async count(filter: Filter = {}): Promise<number> {
    return this.reads.readManyCount(this.name, filter);
  }

  async updateOne(filter: Filter, given: Update, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    const update = checkedUpdate(given);
    return this.commits.transaction(() => {
      const [found] = this.queries.matching(this.name, filter, { limit: 1 });
      if (found) {
        const next = updatedDoc(found.doc, update);
        if (next) this.rows.replace(this.name, found.seq, next);
        return { matched: 1, modified: next ? 1 : 0, upserted: false };
      }
      if (!options.upsert) return { matched: 0, modified: 0, upserted: false };
      const created = copyDoc(buildUpsertDoc(filter, update));
      if (this.rows.seqOf(this.name, created._id) !== undefined) throw new DuplicateIdError(created._id);
      this.rows.insert(this.name, created);
      return { matched: 0, modified: 0, upserted: true };
    });
  }

  async updateMany(filter: Filter, given: Update): Promise<UpdateResult> {
    const update = checkedUpdate(given);
    return this.commits.transaction(() => {
      const found = this.queries.matching(this.name, filter, {});
      let modified = 0;
      for (const { seq, doc } of found) {
        const next = updatedDoc(doc, update);
        if (!next) continue;
        this.rows.replace(this.name, seq, next);
        modified++;
      }
      return { matched: found.length, modified, upserted: false };
    });
  }

  async deleteOne(filter: Filter): Promise<number> {
    return this.commits.transaction(() => {
      const [found] = this.queries.matching(this.name, filter, { limit: 1 });
      if (found) this.rows.remove(this.name, found.seq);
      return found ? 1 : 0;
    });
  }

  async deleteMany(filter: Filter): Promise<number> {
    return this.commits.transaction(() => {
      const found = this.queries.matching(this.name, filter, {});
      for (const { seq } of found) this.rows.remove(this.name, seq);
      return found.length;
    });
  }
}

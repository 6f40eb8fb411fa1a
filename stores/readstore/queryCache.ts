// A bounded cache of read answers for the SQLite read store: the API asks the same small questions
// (a project, its keys, its devices) far more often than the read models change. An answer is
// dropped when its table is written through this connection, and every answer when another
// connection commits; at most MAX_DOCUMENTS documents are held, so memory stays bounded whatever
// the data. The documents are kept deep-frozen and handed out as they are, to every reader that
// asks (in a new array each time): a hit costs a lookup instead of a parse or a copy, and a reader
// that tried to change one would fail loudly rather than change what the others see.
import { deepFreeze } from './deepFreeze';
import { isPlainObject } from './documents/plainObjects';
import type { Document, Filter, FindOptions } from './readStore';

const MAX_DOCUMENTS = 5000;
/** Larger answers (whole listings) are not kept: they would push out many small ones. */
const MAX_DOCUMENTS_PER_ANSWER = 100;

type Answer = { docs: readonly Document[] } | { count: number };
interface Entry {
  table: string;
  answer: Answer;
}

/** Whether JSON.stringify gives the filter a key no other filter shares (no dates, buffers, NaN, undefined). */
function plainJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(plainJson);
  if (isPlainObject(value)) return Object.values(value).every(plainJson);
  return false;
}

/** Every answer counts, empty ones and counts too: a client asking ever new questions between writes must not grow the cache. */
const size = (answer: Answer): number => ('docs' in answer ? Math.max(1, answer.docs.length) : 1);

export class QueryCache {
  /** Every answer by table and query, in least-recently-used order (a Map keeps insertion order). */
  private readonly entries = new Map<string, Entry>();
  private readonly keysByTable = new Map<string, Set<string>>();
  private documents = 0;
  /** Counts the times answers were dropped: every write of this connection and every commit of others drops some. */
  private dropped = 0;

  /** Differs from every earlier value once any table may have changed (see ReadStore.changeMark). */
  get generation(): number {
    return this.dropped;
  }

  /** The key of a query on a table, or undefined for one that cannot be told apart by its JSON. */
  key(table: string, kind: 'find' | 'count', filter: Filter, options: FindOptions = {}): string | undefined {
    if (!plainJson(filter) || !plainJson(options)) return undefined;
    return `${table}\u0000${kind}\u0000${JSON.stringify(filter)}\u0000${JSON.stringify(options)}`;
  }

  find(key: string): Document[] | undefined {
    const answer = this.touch(key);
    return answer && 'docs' in answer ? [...answer.docs] : undefined;
  }

  count(key: string): number | undefined {
    const answer = this.touch(key);
    return answer && 'count' in answer ? answer.count : undefined;
  }

  /** Keeps the answer. Its documents are frozen, in place: the caller hands out the same ones. */
  remember(table: string, key: string, answer: Answer): void {
    if (size(answer) > MAX_DOCUMENTS_PER_ANSWER) return;
    if ('docs' in answer) for (const doc of answer.docs) deepFreeze(doc);
    this.forget(key);
    this.entries.set(key, { table, answer: 'docs' in answer ? { docs: [...answer.docs] } : answer });
    let keys = this.keysByTable.get(table);
    if (!keys) this.keysByTable.set(table, (keys = new Set()));
    keys.add(key);
    this.documents += size(answer);
    while (this.documents > MAX_DOCUMENTS) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.forget(oldest);
    }
  }

  clearTable(table: string): void {
    this.dropped++;
    const keys = this.keysByTable.get(table);
    if (!keys) return;
    for (const key of [...keys]) this.forget(key);
    this.keysByTable.delete(table);
  }

  clear(): void {
    this.dropped++;
    this.entries.clear();
    this.keysByTable.clear();
    this.documents = 0;
  }

  private touch(key: string): Answer | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.answer;
  }

  private forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.keysByTable.get(entry.table)?.delete(key);
    this.documents -= size(entry.answer);
  }
}

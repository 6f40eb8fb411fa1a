// A bounded cache of read answers for the SQLite read store: the API asks the same small questions
// (a project, its keys, its devices) far more often than the read models change. An answer is
// dropped when its table is written through this connection, and every answer when another
// connection commits; at most MAX_DOCUMENTS documents are held, so memory stays bounded whatever
// the data. Callers get copies: what they change never reaches the cache.
import { copyDoc, isPlainObject } from './memoryReadStore';
import type { Document, Filter, FindOptions } from './readStore';

const MAX_DOCUMENTS = 5000;
/** Larger answers (whole listings) are not kept: they would push out many small ones. */
const MAX_DOCUMENTS_PER_ANSWER = 100;

type Answer = { docs: Document[] } | { count: number };

/** Whether JSON.stringify gives the filter a key no other filter shares (no dates, buffers, NaN, undefined). */
function plainJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(plainJson);
  if (isPlainObject(value)) return Object.values(value).every(plainJson);
  return false;
}

export class QueryCache {
  /** Per table, its answers by query, in least-recently-used order across tables via `order`. */
  private readonly byTable = new Map<string, Map<string, Answer>>();
  private readonly order = new Map<string, string>();
  private documents = 0;

  key(kind: 'find' | 'count', filter: Filter, options: FindOptions = {}): string | undefined {
    if (!plainJson(filter) || !plainJson(options)) return undefined;
    return `${kind}\u0000${JSON.stringify(filter)}\u0000${JSON.stringify(options)}`;
  }

  find(table: string, key: string): Document[] | undefined {
    const answer = this.touch(table, key);
    return answer && 'docs' in answer ? answer.docs.map((doc) => copyDoc(doc)) : undefined;
  }

  count(table: string, key: string): number | undefined {
    const answer = this.touch(table, key);
    return answer && 'count' in answer ? answer.count : undefined;
  }

  /** Keeps the answer; the documents handed in are the caller's to keep too (a copy is stored). */
  remember(table: string, key: string, answer: Answer): void {
    const size = 'docs' in answer ? answer.docs.length : 0;
    if (size > MAX_DOCUMENTS_PER_ANSWER) return;
    let answers = this.byTable.get(table);
    if (!answers) this.byTable.set(table, (answers = new Map()));
    this.forget(table, key);
    answers.set(key, 'docs' in answer ? { docs: answer.docs.map((doc) => copyDoc(doc)) } : answer);
    this.order.set(`${table}\u0000${key}`, table);
    this.documents += size;
    while (this.documents > MAX_DOCUMENTS) {
      const oldest = this.order.entries().next().value;
      if (!oldest) break;
      const [entry, oldTable] = oldest;
      this.forget(oldTable, entry.slice(oldTable.length + 1));
    }
  }

  clearTable(table: string): void {
    const answers = this.byTable.get(table);
    if (!answers) return;
    for (const key of [...answers.keys()]) this.forget(table, key);
    this.byTable.delete(table);
  }

  clear(): void {
    this.byTable.clear();
    this.order.clear();
    this.documents = 0;
  }

  private touch(table: string, key: string): Answer | undefined {
    const answer = this.byTable.get(table)?.get(key);
    if (answer) {
      const entry = `${table}\u0000${key}`;
      this.order.delete(entry);
      this.order.set(entry, table);
    }
    return answer;
  }

  private forget(table: string, key: string): void {
    const answers = this.byTable.get(table);
    const answer = answers?.get(key);
    if (!answer) return;
    answers!.delete(key);
    this.order.delete(`${table}\u0000${key}`);
    if ('docs' in answer) this.documents -= answer.docs.length;
  }
}

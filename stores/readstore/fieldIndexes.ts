// Equality indexes for the memory read store: a query pinning a top-level field to a scalar
// (`{ projectId: 7 }`, `{ collaboratorIds: 3 }`) reads the documents holding that value instead of
// scanning the collection. An index is built the first time a field is queried on a collection of
// some size, and kept up to date by every write after that. It only narrows the candidates: the
// whole filter is still applied to them, so the answers are the same with or without it.
import type { Document, DocumentId } from './readStore';

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** What an equality query on this value matches: the value itself, or each element of an array. */
function keysOf(value: unknown): Scalar[] {
  if (isScalar(value)) return [value];
  if (Array.isArray(value)) return [...new Set(value.filter(isScalar))];
  return [];
}

const NONE: ReadonlySet<DocumentId> = new Set();

export class FieldIndexes {
  private readonly byField = new Map<string, Map<Scalar, Set<DocumentId>>>();

  /** @param minDocuments collections smaller than this are scanned: an index would not pay. */
  constructor(private readonly minDocuments: number) {}

  /**
   * The ids of the documents whose `field` holds `value` (or an array containing it); undefined
   * when the field is not indexed and the collection is too small for an index to pay.
   */
  lookup(field: string, value: Scalar, docs: ReadonlyMap<DocumentId, Document>): ReadonlySet<DocumentId> | undefined {
    let index = this.byField.get(field);
    if (!index) {
      if (docs.size < this.minDocuments) return undefined;
      index = new Map();
      for (const doc of docs.values()) add(index, doc[field], doc._id);
      this.byField.set(field, index);
    }
    return index.get(value) ?? NONE;
  }

  added(doc: Document): void {
    for (const [field, index] of this.byField) add(index, doc[field], doc._id);
  }

  removed(doc: Document): void {
    for (const [field, index] of this.byField) remove(index, doc[field], doc._id);
  }

  replaced(before: Document, after: Document): void {
    for (const [field, index] of this.byField) {
      const old = before[field];
      const now = after[field];
      if (old === now) continue;
      remove(index, old, before._id);
      add(index, now, after._id);
    }
  }

  clear(): void {
    this.byField.clear();
  }
}

function add(index: Map<Scalar, Set<DocumentId>>, value: unknown, id: DocumentId): void {
  for (const key of keysOf(value)) {
    let ids = index.get(key);
    if (!ids) index.set(key, (ids = new Set()));
    ids.add(id);
  }
}

function remove(index: Map<Scalar, Set<DocumentId>>, value: unknown, id: DocumentId): void {
  for (const key of keysOf(value)) {
    const ids = index.get(key);
    if (!ids) continue;
    ids.delete(id);
    if (ids.size === 0) index.delete(key);
  }
}

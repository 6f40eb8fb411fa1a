// The names and ids every read store checks before it writes, and the error an upsert meets on a
// taken `_id`: the same rules on every adapter, so the contract suite holds them alike.
import type { DocumentId } from '../readStore';

/** The collection both adapters keep checkpoints in; reserved so a read model cannot collide with it. */
export const CHECKPOINTS_COLLECTION = 'checkpoints';

/**
 * An upsert whose filter matched nothing but whose `_id` is taken (MongoDB's E11000), e.g. a guarded
 * upsert `{ _id, _position: { $lt: p } }` replayed after the document moved on. Both adapters throw it.
 */
export class DuplicateIdError extends Error {
  readonly code = 'DUPLICATE_ID';
  constructor(readonly id: unknown) {
    super(`A document with _id ${JSON.stringify(id)} already exists`);
    this.name = 'DuplicateIdError';
  }
}

export function assertCollectionName(name: string): void {
  if (name === CHECKPOINTS_COLLECTION) throw new Error(`"${CHECKPOINTS_COLLECTION}" is reserved for checkpoints`);
}

export function assertDocumentId(id: unknown): asserts id is DocumentId {
  if (typeof id !== 'string' && typeof id !== 'number') throw new Error(`A document id must be a string or a number, not ${JSON.stringify(id) ?? String(id)}`);
}

// `npm run rebuild -- --verify` (issue 13): the read models rebuilt from the log into a scratch
// store, compared document by document with the live ones. Each projection is replayed up to its
// own live checkpoint, so a live store that is behind (or a projection that failed) is compared at
// the point it reached; only a difference in what the same events produced is reported.

import { isDeepStrictEqual } from 'node:util';
import { loadCheckpoint } from '../stores/eventstore/checkpoint';
import type { EventStore, Position } from '../stores/eventstore/eventStore';
import type { Document, DocumentId, ReadStore } from '../stores/readstore/readStore';
import type { Projection } from './projection';

export interface ReadModelDifference {
  collection: string;
  id: DocumentId;
  /** Undefined: the document is missing on that side. */
  live: Document | undefined;
  rebuilt: Document | undefined;
}

export interface ReadModelComparison {
  events: number;
  collections: number;
  documents: number;
  /** How many documents differ; `differences` holds the first of them. */
  differing: number;
  differences: ReadModelDifference[];
}

const PAGE = 1000;
const KEPT_DIFFERENCES = 50;

export async function compareWithRebuild(
  events: EventStore,
  live: ReadStore,
  projections: readonly Projection[],
  scratch: ReadStore,
  onProgress?: (events: number, position: Position) => void,
): Promise<ReadModelComparison> {
  const reached = new Map<Projection, Position | undefined>();
  for (const p of projections) reached.set(p, await loadCheckpoint(live, p.name, events));
  const last = [...reached.values()].reduce<Position | undefined>((a, b) => (b !== undefined && (a === undefined || b > a) ? b : a), undefined);
  let applied = 0;
  if (last !== undefined) {
    for await (const event of events.readAll()) {
      if (event.position > last) break;
      for (const p of projections) {
        const upTo = reached.get(p);
        if (upTo !== undefined && event.position <= upTo && p.handles.has(event.type)) await p.apply(event, scratch);
      }
      applied += 1;
      if (onProgress && applied % 10_000 === 0) onProgress(applied, event.position);
    }
  }

  return { ...(await compareReadModels(live, scratch, projections)), events: applied };
}

/** Compares the collections the projections write, document by document, in `_id` order. */
export async function compareReadModels(live: ReadStore, rebuilt: ReadStore, projections: readonly Projection[]): Promise<ReadModelComparison> {
  const scratch = rebuilt;
  const collections = [...new Set(projections.flatMap((p) => [...p.writes]))].sort();
  const comparison: ReadModelComparison = { events: 0, collections: collections.length, documents: 0, differing: 0, differences: [] };
  const differ = (difference: ReadModelDifference) => {
    comparison.differing += 1;
    if (comparison.differences.length < KEPT_DIFFERENCES) comparison.differences.push(difference);
  };
  for (const collection of collections) {
    const liveDocs = pages(live, collection);
    const rebuiltDocs = pages(scratch, collection);
    let a = await liveDocs.next();
    let b = await rebuiltDocs.next();
    while (!a.done || !b.done) {
      const order = a.done ? 1 : b.done ? -1 : compareIds(a.value._id, b.value._id);
      comparison.documents += 1;
      if (order < 0) {
        differ({ collection, id: a.value!._id, live: a.value!, rebuilt: undefined });
        a = await liveDocs.next();
      } else if (order > 0) {
        differ({ collection, id: b.value!._id, live: undefined, rebuilt: b.value! });
        b = await rebuiltDocs.next();
      } else {
        if (!isDeepStrictEqual(a.value, b.value)) differ({ collection, id: a.value!._id, live: a.value!, rebuilt: b.value! });
        a = await liveDocs.next();
        b = await rebuiltDocs.next();
      }
    }
  }
  return comparison;
}

/** Numbers before strings, then by value: the order both pages are walked in. */
function compareIds(x: DocumentId, y: DocumentId): number {
  if (typeof x !== typeof y) return typeof x === 'number' ? -1 : 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A collection's documents in `_id` order, a page at a time (numeric ids, then string ids). */
async function* pages(store: ReadStore, name: string): AsyncGenerator<Document> {
  const collection = store.collection(name);
  for (const kind of ['number', 'string'] as const) {
    let after: DocumentId | undefined;
    for (;;) {
      const filter = after === undefined ? { _id: { $type: kind } } : { _id: { $type: kind, $gt: after } };
      const page = await collection.find(filter, { sort: { _id: 1 }, limit: PAGE });
      yield* page;
      if (page.length < PAGE) break;
      after = page.at(-1)!._id;
    }
  }
}

// `npm run rebuild -- --verify`: the read models rebuilt from the log into a scratch
// store, compared document by document with the live ones. Each projection is replayed up to its
// own live checkpoint, so a live store that is behind (or a projection that failed) is compared at
// the point it reached; only a difference in what the same events produced is reported.

import { isDeepStrictEqual } from 'node:util';
import { loadCheckpoint } from '../processing/checkpoint';
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
  for (const p of projections) reached.set(p, await loadCheckpoint(live, p.checkpoint, events));
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

/**
 * Compares the collections the projections write, document by document: each page of the live
 * collection (walked in the store's own order) is looked up by `_id` in the rebuilt one, then, when
 * the rebuilt one holds more than matched, its pages are looked up in the live one for the extras.
 * Each page costs its own size, so the whole walk grows with the collection, not with its square.
 */
export async function compareReadModels(live: ReadStore, rebuilt: ReadStore, projections: readonly Projection[]): Promise<ReadModelComparison> {
  const collections = [...new Set(projections.flatMap((p) => [...p.writes]))].sort();
  const comparison: ReadModelComparison = { events: 0, collections: collections.length, documents: 0, differing: 0, differences: [] };
  const differ = (difference: ReadModelDifference) => {
    comparison.differing += 1;
    if (comparison.differences.length < KEPT_DIFFERENCES) comparison.differences.push(difference);
  };
  for (const collection of collections) {
    let matched = 0;
    for await (const page of live.walk(collection, PAGE)) {
      const counterparts = await byId(rebuilt, collection, page);
      for (const doc of page) {
        comparison.documents += 1;
        const other = counterparts.get(doc._id);
        if (other === undefined) differ({ collection, id: doc._id, live: doc, rebuilt: undefined });
        else {
          matched += 1;
          if (!isDeepStrictEqual(doc, other)) differ({ collection, id: doc._id, live: doc, rebuilt: other });
        }
      }
    }
    // Ids are unique on both sides: every rebuilt document was matched unless it holds more.
    if ((await rebuilt.collection(collection).count()) === matched) continue;
    for await (const page of rebuilt.walk(collection, PAGE)) {
      const counterparts = await byId(live, collection, page);
      for (const doc of page) {
        if (counterparts.has(doc._id)) continue;
        comparison.documents += 1;
        differ({ collection, id: doc._id, live: undefined, rebuilt: doc });
      }
    }
  }
  return comparison;
}

/** The documents of `store` with the page's ids, by id. */
async function byId(store: ReadStore, collection: string, page: readonly Document[]): Promise<Map<DocumentId, Document>> {
  const found = await store.collection(collection).find({ _id: { $in: page.map((d) => d._id) } });
  return new Map(found.map((d) => [d._id, d]));
}

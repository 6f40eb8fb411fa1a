import type { EventStore, StoredEvent } from '../../stores/eventstore/eventStore';
import type { HistoryDocument } from './historyDocument';

export const eventKey = (doc: Pick<HistoryDocument, 'streamId' | 'revision'>): string => `${doc.streamId}\u0000${doc.revision}`;

/**
 * The events the history documents point at, by eventKey. A stream's events come in one read of
 * the revisions they span, unless they are sparse in it (a job's end among thousands of output
 * lines): then one read each, so no page reads far more than it shows.
 */
export async function eventsOf(events: EventStore, docs: readonly HistoryDocument[]): Promise<Map<string, StoredEvent>> {
  const byStream = new Map<string, bigint[]>();
  for (const doc of docs) {
    const revisions = byStream.get(doc.streamId) ?? [];
    revisions.push(BigInt(doc.revision));
    byStream.set(doc.streamId, revisions);
  }
  const found = new Map<string, StoredEvent>();
  await Promise.all(
    [...byStream].map(async ([streamId, revisions]) => {
      const from = revisions.reduce((a, b) => (a < b ? a : b));
      const span = Number(revisions.reduce((a, b) => (a > b ? a : b)) - from) + 1;
      const reads = span <= 2 * revisions.length ? [events.readStream(streamId, { fromRevision: from, maxCount: span })] : revisions.map((r) => events.readStream(streamId, { fromRevision: r, maxCount: 1 }));
      for (const read of await Promise.all(reads)) for (const event of read) found.set(eventKey({ streamId, revision: event.revision.toString() }), event);
    }),
  );
  return found;
}

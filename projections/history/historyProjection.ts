import type { StoredEvent } from '../../stores/eventstore/eventStore';
import type { ReadStore } from '../../stores/readstore/readStore';
import { positionKey, type Projection } from '../projection';
import { checkpointName } from '../readModelVersions';
import { HISTORY, HISTORY_STREAMS, type HistoryDocument, type HistoryStreamDocument } from './historyDocument';

/**
 * Says it handles every event type: the history indexes the whole log, system events (uniqueness
 * reservations, id blocks) included, and a new event type must not be left out by omission. It
 * lists none, so the per-type checks of the projection tests have nothing to enumerate; the
 * property test and the whole-log replays cover it.
 */
class EveryEventType implements ReadonlySet<string> {
  readonly size = 0;
  has(): boolean {
    return true;
  }
  forEach(): void {}
  *entries(): SetIterator<[string, string]> {}
  *keys(): SetIterator<string> {}
  *values(): SetIterator<string> {}
  *[Symbol.iterator](): SetIterator<string> {}
}

export const projectIdOf = (data: Record<string, unknown>): number | null =>
  typeof data.projectId === 'number' && Number.isSafeInteger(data.projectId) ? data.projectId : null;

/** A user's own streams: the account, and its logins. */
const USER_STREAM = /^(?:user|logins)-(\d{1,15})$/;

/** One history document per event; a replayed event finds its document and changes nothing. */
export const historyProjection: Projection = {
  name: 'history',
  checkpoint: checkpointName('history'),
  handles: new EveryEventType(),
  writes: new Set([HISTORY, HISTORY_STREAMS]),
  async apply(event: StoredEvent, store: ReadStore) {
    const streams = store.collection<HistoryStreamDocument>(HISTORY_STREAMS);
    let projectId = projectIdOf(event.data);
    if (projectId !== null && event.revision === 0n) {
      // Jobs, samples, devices: their first event names the project, later ones may not.
      await streams.updateOne({ _id: event.streamId }, { $setOnInsert: { projectId } }, { upsert: true });
    } else if (projectId === null && event.revision > 0n) {
      projectId = (await streams.findOne({ _id: event.streamId }))?.projectId ?? null;
    }
    const user = USER_STREAM.exec(event.streamId);
    const key = positionKey(event.position);
    // insertOnce's write, its fields given without `_id` rather than taken apart from a whole document.
    const fields: Omit<HistoryDocument, '_id'> = {
      position: event.position.toString(),
      streamId: event.streamId,
      revision: event.revision.toString(),
      type: event.type,
      created: event.metadata.time,
      actor: event.metadata.actor,
      correlationId: event.metadata.correlationId,
      causationId: event.metadata.causationId ?? null,
      projectId,
      userId: user ? Number(user[1]) : null,
      _position: key,
    };
    await store.collection<HistoryDocument>(HISTORY).updateOne({ _id: key }, { $setOnInsert: fields }, { upsert: true });
  },
};

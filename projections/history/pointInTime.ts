// Read models as they were at a point in time (`asOf`): the project's events up to then,
// and those of the users it involved, replayed in log order through the very projections that keep
// the live read models, into a scratch memory store. No second implementation of any view: the
// routes run their usual code against queries over the scratch store.

import type { EventStore, StoredEvent } from '../../stores/eventstore/eventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import type { ReadStore } from '../../stores/readstore/readStore';
import type { Projection } from '../projection';
import type { HistoryDocument } from './historyDocument';
import { eventKey, eventsOf } from './historyEvents';
import { historyUpTo, type HistoryBound } from './historyQueries';

/** The user ids an event names: in its data, or as its actor. */
function usersNamedBy(doc: HistoryDocument, event: StoredEvent | undefined, into: Set<number>): void {
  const actor = /^user:(\d{1,15})$/.exec(doc.actor);
  if (actor) into.add(Number(actor[1]));
  for (const field of ['userId', 'ownerUserId', 'invitedUserId', 'createdByUserId']) {
    const value = event?.data[field];
    if (typeof value === 'number' && Number.isSafeInteger(value)) into.add(value);
  }
}

/**
 * The read models of `projectId` as of `asOf` (a time, or a log position: where a version stands),
 * or undefined when the project had no event by then.
 * `history` is the read store holding the history index; `projections` the live ones (history aside).
 */
export async function readModelsAsOf(
  events: EventStore & { isForgotten(event: StoredEvent): Promise<boolean> },
  history: ReadStore,
  projections: readonly Projection[],
  projectId: number,
  asOf: HistoryBound,
): Promise<ReadStore | undefined> {
  const projectDocs: HistoryDocument[] = [];
  for await (const doc of historyUpTo(history, { projectId }, asOf)) projectDocs.push(doc);
  if (projectDocs.length === 0) return undefined;
  const projectEvents = await eventsOf(events, projectDocs);
  const users = new Set<number>();
  for (const doc of projectDocs) usersNamedBy(doc, projectEvents.get(eventKey(doc)), users);
  const userDocs: HistoryDocument[] = [];
  for await (const doc of historyUpTo(history, { userId: { $in: [...users] } }, asOf)) userDocs.push(doc);
  const userEvents = await eventsOf(events, userDocs);

  // A past view is shown with today's privacy: a person forgotten since is not brought back by it.
  // Their sealed fields already read as null; their username (not sealed) would not, so none of their
  // account's events are replayed, and the view holds no profile of theirs (collaborator entries
  // without a profile are left out, as they are live for a deleted account).
  const forgotten = new Set<number>();
  for (const event of userEvents.values()) {
    if (event.type === 'UserRegistered' && (await events.isForgotten(event))) forgotten.add(Number(event.data.userId));
  }
  const accountOfForgotten = (doc: HistoryDocument) => doc.userId !== null && forgotten.has(doc.userId);
  const all = [...projectDocs, ...userDocs.filter((d) => d.projectId !== projectId && !accountOfForgotten(d))].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
  const scratch = new MemoryReadStore();
  for (const doc of all) {
    const key = eventKey(doc);
    const event = projectEvents.get(key) ?? userEvents.get(key);
    if (!event) continue;
    for (const projection of projections) if (projection.handles.has(event.type)) await projection.apply(event, scratch);
  }
  return scratch;
}

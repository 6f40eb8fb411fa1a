// Checkpoints carry the identity of the log whose position they hold. A position is an offset in
// one log only (SQLite's row numbers, EventStoreDB's byte offsets): resumed in another log it would
// skip or repeat events, or, on EventStoreDB, point into the middle of a record.

import type { ReadStore } from '../stores/readstore/readStore';
import type { EventStore, Position } from '../stores/eventstore/eventStore';

/**
 * A checkpoint stored for another log. Refused rather than rebuilt over: the read models beside it
 * were built from that other log, and replaying this one on top would mix both, while dropping
 * them on our own could wipe a shared read store because EVENTSTORE_URL pointed at the wrong server.
 */
export class ForeignCheckpointError extends Error {
  readonly code = 'FOREIGN_CHECKPOINT';
  readonly status = 500;
  constructor(
    readonly checkpoint: string,
    readonly checkpointStore: string,
    readonly eventStore: string,
  ) {
    super(
      `Checkpoint "${checkpoint}" belongs to the event log ${checkpointStore}, but this event store is the log ${eventStore}: ` +
        'the read store was filled from another log. Point EVENTSTORE_URL/DATA_DIR and MONGO_URL at the same installation, ' +
        'or rebuild the read models from this log (npm run rebuild)',
    );
    this.name = 'ForeignCheckpointError';
  }
}

/**
 * The stored position of `name` in this log. A checkpoint without identity (stored before
 * identities) is taken as this log's, and gets tagged by the next storeCheckpoint.
 */
export async function loadCheckpoint(readStore: ReadStore, name: string, events: EventStore): Promise<Position | undefined> {
  const checkpoint = await readStore.readCheckpoint(name);
  if (!checkpoint) return undefined;
  const identity = await events.identity();
  if (checkpoint.store !== undefined && checkpoint.store !== identity) throw new ForeignCheckpointError(name, checkpoint.store, identity);
  return checkpoint.position;
}

export async function storeCheckpoint(readStore: ReadStore, name: string, position: Position, events: EventStore): Promise<void> {
  await readStore.setCheckpoint(name, position, await events.identity());
}

// Records the log's running hash now and then (domain/audit/auditEvents.ts), so that verification
// can show a missing tail or a change across streams. It picks up from the last recorded checkpoint,
// so each run folds only the events appended since: memory and time do not grow with the log.
// Several processes may run it: the append expects the checkpoint stream's revision it read, so one
// of two racing records wins and the other reloads and carries on from it next time.

import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AUDIT_LOG_STREAM, type LogCheckpointRecorded } from '../../domain/audit/auditEvents';
import { EMPTY_LOG_HASH, foldLogHash, GENESIS_HASH } from '../../stores/eventstore/eventChain';
import { WrongExpectedRevisionError, type EventStore, type Position, type Revision } from '../../stores/eventstore/eventStore';
import { startPeriodic, type Periodic } from '../sagas/periodic';

interface CheckpointState {
  /** The checkpoint stream's last revision; undefined before its first checkpoint. */
  revision: Revision | undefined;
  through: Position | undefined;
  logHash: string;
  events: number;
}

const PAGE = 1000;

const NO_CHECKPOINT: CheckpointState = { revision: undefined, through: undefined, logHash: EMPTY_LOG_HASH, events: 0 };

/** The last checkpoint, reading the checkpoint stream only past what `known` already covers. */
async function lastCheckpoint(store: EventStore, known: CheckpointState): Promise<CheckpointState> {
  let state = known;
  for (let from = known.revision === undefined ? 0n : known.revision + 1n; ; ) {
    const page = await store.readStream(AUDIT_LOG_STREAM, { fromRevision: from, maxCount: PAGE });
    for (const event of page) {
      state = { ...state, revision: event.revision };
      if (event.type !== 'LogCheckpointRecorded') continue;
      const data = event.data as LogCheckpointRecorded['data'];
      state = { revision: event.revision, through: BigInt(data.throughPosition), logHash: data.logHash, events: data.events };
    }
    if (page.length < PAGE) return state;
    from = page.at(-1)!.revision + 1n;
  }
}

/**
 * Folds the events after the last checkpoint and records a new one when the log has moved. Answers
 * the recorded data, or undefined when there was nothing new or another process recorded first.
 */
export async function recordLogCheckpoint(store: EventStore, now: Date = new Date()): Promise<LogCheckpointRecorded['data'] | undefined> {
  return (await recordAfter(store, NO_CHECKPOINT, now)).recorded;
}

/** One run from a known checkpoint: what it recorded, and the checkpoint the next run starts from. */
async function recordAfter(store: EventStore, known: CheckpointState, now: Date): Promise<{ recorded: LogCheckpointRecorded['data'] | undefined; state: CheckpointState }> {
  const state = await lastCheckpoint(store, known);
  let { logHash, events, through } = state;
  // Checkpoints are events too; one after another with nothing between would never end.
  let moved = false;
  for await (const page of store.readChain(through === undefined ? undefined : { after: through })) for (const link of page) {
    logHash = foldLogHash(logHash, link.hash ?? GENESIS_HASH);
    events += 1;
    through = link.position;
    if (link.streamId !== AUDIT_LOG_STREAM) moved = true;
  }
  if (!moved || through === undefined) return { recorded: undefined, state };
  const data: LogCheckpointRecorded['data'] = { throughPosition: through.toString(), logHash, events, recorded: now.toISOString() };
  try {
    const { nextExpectedRevision } = await store.appendToStream(
      AUDIT_LOG_STREAM,
      [{ id: randomUUID(), type: 'LogCheckpointRecorded', data, metadata: { actor: 'system:audit', correlationId: randomUUID(), time: now.toISOString() } }],
      state.revision ?? 'no_stream',
    );
    return { recorded: data, state: { revision: nextExpectedRevision, through, logHash, events } };
  } catch (error) {
    // Another process recorded first: the next run reads its checkpoint and goes on from there.
    if (error instanceof WrongExpectedRevisionError) return { recorded: undefined, state };
    throw error;
  }
}

export function startLogCheckpoints(store: EventStore, log: Logger, intervalMs: number): Periodic {
  // Kept between runs, so a run reads only the checkpoints recorded since (the stream grows for good).
  let known = NO_CHECKPOINT;
  return startPeriodic('recording a log checkpoint', log, intervalMs, async (now) => {
    const { recorded, state } = await recordAfter(store, known, now);
    known = state;
    if (recorded) log.info({ throughPosition: recorded.throughPosition, events: recorded.events, logHash: recorded.logHash }, 'log checkpoint recorded');
  });
}

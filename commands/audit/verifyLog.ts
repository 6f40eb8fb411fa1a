// Walks the whole log as stored and checks it against its own hashes (stores/eventstore/eventChain.ts):
// each stream's revisions in order with none missing, each event's chain hash recomputed from its
// stored texts and its predecessor's hash, and the running log hash against every recorded
// checkpoint. It stops at the first problem, which names the event (stream, revision, position).
//
// What it cannot show: a log rewritten whole, every hash recomputed, checkpoints included. Against
// that, keep the log hash it prints somewhere the log's writers cannot change.

import { AUDIT_LOG_STREAM, type LogCheckpointRecorded } from '../../domain/audit/auditEvents';
import { chainHash, EMPTY_LOG_HASH, foldLogHash, GENESIS_HASH, type ChainLink } from '../../stores/eventstore/eventChain';
import type { EventStore, Position, Revision } from '../../stores/eventstore/eventStore';

export type LogProblemKind = 'altered' | 'missing' | 'reordered' | 'unchained' | 'checkpoint';

export interface LogProblem {
  kind: LogProblemKind;
  streamId: string;
  revision: Revision;
  position: Position;
  detail: string;
}

export interface VerifyReport {
  events: number;
  streams: number;
  checkpointsMatched: number;
  /** The running hash through the last event read: record it elsewhere to detect a whole rewrite. */
  logHash: string;
  lastPosition: Position | undefined;
  problem: LogProblem | undefined;
}

interface RecordedCheckpoint {
  logHash: string;
  events: number;
  /** Where the checkpoint event itself is: its record is only as good as its own chain. */
  streamId: string;
  revision: Revision;
}

export async function verifyLog(store: EventStore, onProgress?: (events: number, position: Position) => void): Promise<VerifyReport> {
  // A checkpoint stream that cannot be read was altered: the walk names the event, and says so
  // below should the walk find nothing.
  let unreadable: unknown;
  const checkpoints = await recordedCheckpoints(store).catch((error: unknown) => {
    unreadable = error;
    return new Map<Position, RecordedCheckpoint>();
  });
  const heads = new Map<string, { revision: Revision; hash: string }>();
  let logHash = EMPTY_LOG_HASH;
  let events = 0;
  let matched = 0;
  let lastPosition: Position | undefined;
  const report = (problem: LogProblem | undefined): VerifyReport => ({ events, streams: heads.size, checkpointsMatched: matched, logHash, lastPosition, problem });

  const pending = [...checkpoints.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const missingCovered = (position: Position): LogProblem => {
    const recorded = checkpoints.get(position)!;
    return {
      kind: 'missing',
      streamId: recorded.streamId,
      revision: recorded.revision,
      position,
      detail: `the checkpoint at ${recorded.streamId} revision ${recorded.revision} covers the log through position ${position}, which is not in the log`,
    };
  };
  for await (const page of store.readChain()) for (const link of page) {
    // The walk went past a position a checkpoint covers without finding it: that event is gone.
    if (pending[0] !== undefined && pending[0] < link.position) return report(missingCovered(pending[0]));
    const problem = checkLink(link, heads.get(link.streamId));
    if (problem) return report(problem);
    heads.set(link.streamId, { revision: link.revision, hash: link.hash! });
    logHash = foldLogHash(logHash, link.hash!);
    events += 1;
    lastPosition = link.position;
    const recorded = checkpoints.get(link.position);
    if (recorded) {
      if (recorded.logHash !== logHash || recorded.events !== events) {
        return report({
          kind: 'checkpoint',
          streamId: link.streamId,
          revision: link.revision,
          position: link.position,
          detail: `the log through this event does not hash as the checkpoint at ${recorded.streamId} revision ${recorded.revision} recorded (${recorded.events} events then, ${events} now): an event before it was altered, removed or moved`,
        });
      }
      matched += 1;
      pending.shift();
    }
    if (onProgress && events % 10_000 === 0) onProgress(events, link.position);
  }
  if (unreadable !== undefined) {
    const message = unreadable instanceof Error ? unreadable.message : String(unreadable);
    return report({ kind: 'checkpoint', streamId: AUDIT_LOG_STREAM, revision: -1n, position: lastPosition ?? 0n, detail: `the checkpoints cannot be read: ${message}` });
  }
  // A checkpoint through a position after the last event: the log lost its tail.
  if (pending[0] !== undefined) return report(missingCovered(pending[0]));
  return report(undefined);
}

function checkLink(link: ChainLink, head: { revision: Revision; hash: string } | undefined): LogProblem | undefined {
  const expected = head ? head.revision + 1n : 0n;
  const at = { streamId: link.streamId, revision: link.revision, position: link.position };
  if (link.revision < expected) {
    return { kind: 'reordered', ...at, detail: `revision ${link.revision} comes after revision ${expected - 1n} of its stream in the log` };
  }
  if (link.revision > expected) {
    const gap = link.revision - expected === 1n ? `revision ${expected} is` : `revisions ${expected} to ${link.revision - 1n} are`;
    return { kind: 'missing', ...at, detail: `${gap} missing before it` };
  }
  if (link.hash === undefined) return { kind: 'unchained', ...at, detail: 'the event has no chain hash' };
  const computed = chainHash(head?.hash ?? GENESIS_HASH, link);
  if (computed !== link.hash) {
    return { kind: 'altered', ...at, detail: 'its stored content or its predecessor does not hash to the chain hash stored with it' };
  }
  return undefined;
}

/** The checkpoints as recorded, by the position they cover; the walk checks their own chain. */
async function recordedCheckpoints(store: EventStore): Promise<Map<Position, RecordedCheckpoint>> {
  const byPosition = new Map<Position, RecordedCheckpoint>();
  for (let from = 0n; ; ) {
    const page = await store.readStream(AUDIT_LOG_STREAM, { fromRevision: from, maxCount: 1000 });
    for (const event of page) {
      if (event.type !== 'LogCheckpointRecorded') continue;
      const data = event.data as LogCheckpointRecorded['data'];
      const position = parsePosition(data.throughPosition);
      if (position === undefined || typeof data.logHash !== 'string' || typeof data.events !== 'number') continue;
      byPosition.set(position, { logHash: data.logHash, events: data.events, streamId: event.streamId, revision: event.revision });
    }
    if (page.length < 1000) return byPosition;
    from = page.at(-1)!.revision + 1n;
  }
}

function parsePosition(text: unknown): Position | undefined {
  return typeof text === 'string' && /^\d{1,30}$/.test(text) ? BigInt(text) : undefined;
}

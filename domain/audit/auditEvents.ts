import type { DomainEvent } from '../shared/decider';

// The log's own checkpoints (stores/eventstore/eventChain.ts): now and then the running hash of
// the whole log, through a position, is recorded as an event of the log itself. Verification walks
// the log again and must reach the same hash at that position, which shows a missing tail or a
// change across streams that per-stream chains alone would not.

export const AUDIT_LOG_STREAM = 'audit-log';

export type LogCheckpointRecorded = DomainEvent<
  'LogCheckpointRecorded',
  {
    /** The last event folded into `logHash`, as a decimal string (positions outgrow numbers). */
    throughPosition: string;
    /** foldLogHash over every event's chain hash, in log order, through `throughPosition`. */
    logHash: string;
    /** How many events that is. */
    events: number;
    recorded: string;
  }
>;

export type AuditEvent = LogCheckpointRecorded;

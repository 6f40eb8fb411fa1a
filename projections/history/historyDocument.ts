import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

/**
 * One document per event of the log, in log order: what the history endpoints filter and page on.
 * The event itself (its data) is read from the log when shown, so sealed personal data stays sealed
 * here and a forgotten user's data reads as forgotten everywhere.
 */
export interface HistoryDocument {
  /** positionKey(position): fixed-width, so `_id` order is log order. */
  _id: string;
  position: string;
  streamId: string;
  revision: string;
  type: string;
  /** The metadata's time: when the command was decided. */
  created: string;
  actor: string;
  correlationId: string;
  causationId: string | null;
  /** The project the event belongs to: its own `projectId`, or its stream's first event's. */
  projectId: number | null;
  /** The user whose own stream (`user-{id}`, `logins-{id}`) it is in, if any. */
  userId: number | null;
  _position: string;
  [key: string]: unknown;
}

/** Which project a stream belongs to, learned from its first event, for later events that do not say. */
export interface HistoryStreamDocument {
  _id: string;
  projectId: number;
  [key: string]: unknown;
}

export const HISTORY = 'history';

/** Every history query pins at most one of these and pages by `_position` (log order). */
export const HISTORY_INDEXES: readonly IndexDeclaration[] = [
  { keys: { _position: 1 } },
  { keys: { projectId: 1, _position: 1 } },
  { keys: { userId: 1, _position: 1 } },
  { keys: { actor: 1, _position: 1 } },
  { keys: { type: 1, _position: 1 } },
];
export const HISTORY_STREAMS = 'history_streams';

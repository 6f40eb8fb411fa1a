import { historyData, type HistoryReader } from '../../domain/audit/historyRedaction';
import type { StoredEvent } from '../../stores/eventstore/eventStore';

/** One event as the history shows it: over the API and in an export alike. */
export interface HistoryEntry {
  /** A string: log positions outgrow JavaScript numbers on EventStoreDB. */
  position: string;
  streamId: string;
  type: string;
  created: string;
  actor: string;
  correlationId: string;
  causationId: string | null;
  data: Record<string, unknown> | null;
}

/** `forgotten`: the event's sealed fields read as null because their subject was forgotten. */
export function historyEntry(event: StoredEvent, forgotten: boolean, reader: HistoryReader = { kind: 'all' }): HistoryEntry {
  return {
    position: event.position.toString(),
    streamId: event.streamId,
    type: event.type,
    created: event.metadata.time,
    actor: event.metadata.actor,
    correlationId: event.metadata.correlationId,
    causationId: event.metadata.causationId ?? null,
    data: historyData(event.type, event.data, forgotten, reader),
  };
}

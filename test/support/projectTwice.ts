import type { DomainEvent } from '../../domain/shared/decider';
import { allProjections } from '../../projections';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';

/** An event to project, in the stream it belongs to. */
export type InStream = DomainEvent & { streamId: string };

/**
 * Applies the events in log order through every projection, each one twice (delivery is at least
 * once), to a memory read store: what a projection's own test reads its queries from.
 */
export async function projectTwice(events: readonly InStream[], store = new MemoryReadStore()): Promise<MemoryReadStore> {
  let position = 0n;
  for (const e of events) {
    position += 1n;
    const stored: StoredEvent = {
      id: `00000000-0000-4000-8000-${position.toString().padStart(12, '0')}`,
      type: e.type,
      // As the log gives it back: JSON, never the test's own objects.
      data: JSON.parse(JSON.stringify(e.data)) as StoredEvent['data'],
      metadata: { actor: 'system:test', correlationId: 'projection-test', time: '2026-11-28T12:00:00.000Z' },
      streamId: e.streamId,
      revision: position - 1n,
      position,
    };
    for (const p of allProjections) {
      if (!p.handles.has(e.type)) continue;
      await p.apply(stored, store);
      await p.apply(stored, store);
    }
  }
  return store;
}

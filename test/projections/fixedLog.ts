import { fold, type Decider, type DomainEvent } from '../../domain/shared/decider';
import { chainHash, GENESIS_HASH } from '../../stores/eventstore/eventChain';
import type { EventStore, Position, StoredEvent, Subscription } from '../../stores/eventstore/eventStore';

/**
 * An event store over a log given whole (positions as the events carry them), for feeding the
 * runners events no decider would append in that order. Read-only: appends are refused.
 */
export function fixedLog(events: readonly StoredEvent[], identity = 'fixed-log'): EventStore {
  const after = (position: Position | undefined) => events.filter((e) => position === undefined || e.position > position);
  return {
    async appendToStream() {
      throw new Error('A fixed log takes no appends');
    },
    async readStream(streamId) {
      return events.filter((e) => e.streamId === streamId);
    },
    async *readAll(options = {}) {
      yield* after(options.after);
    },
    subscribeToAll(options = {}): Subscription {
      let close: () => void = () => undefined;
      const closed = new Promise<void>((resolve) => (close = resolve));
      return {
        async *[Symbol.asyncIterator]() {
          yield* after(options.after);
          // Then live, where nothing more comes: until closed.
          await closed;
        },
        async close() {
          close();
        },
      };
    },
    async *readChain(options = {}) {
      // Chained as an adapter would have stored them.
      const heads = new Map<string, string>();
      const links = events.map((e) => {
        const link = { streamId: e.streamId, revision: e.revision, position: e.position, id: e.id, type: e.type, data: JSON.stringify(e.data), metadata: JSON.stringify(e.metadata) };
        const hash = chainHash(heads.get(e.streamId) ?? GENESIS_HASH, link);
        heads.set(e.streamId, hash);
        return { ...link, hash };
      });
      yield links.filter((l) => options.after === undefined || l.position > options.after);
    },
    async headPosition() {
      return events.at(-1)?.position;
    },
    async identity() {
      return identity;
    },
    async close() {},
  };
}

/** The events a decider appends for `commands` given in turn, each decided on the state of those before. */
export function decided<Command, Event extends DomainEvent, State>(decider: Decider<Command, Event, State>, ...commands: Command[]): Event[] {
  const events: Event[] = [];
  for (const c of commands) events.push(...decider.decide(c, fold(decider, events)));
  return events;
}

/** Events as stored one after another (positions 1, 2, ...), recorded at `time`, on `streamId` unless `streamOf` names each one's. */
export function storedLog(events: readonly DomainEvent[], time: Date, streamOf: (e: DomainEvent) => string = () => 'test'): StoredEvent[] {
  return events.map((e, i) => ({
    id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
    type: e.type,
    data: { ...e.data },
    metadata: { actor: 'system:test', correlationId: 'test', time: time.toISOString() },
    streamId: streamOf(e),
    revision: BigInt(i),
    position: BigInt(i + 1),
  }));
}

import { fold, type Decider, type DomainEvent } from '../domain/shared/decider';
import type { EventStore, Revision } from '../stores/eventstore/eventStore';

export interface AggregatedStream<Event extends DomainEvent, State> {
  state: State;
  /** The stream's events as the decider reads them, in order (empty when the stream does not exist). */
  events: Event[];
  /** The revision of the stream's last event: what an append expects; undefined when the stream does not exist. */
  revision: Revision | undefined;
}

/**
 * Reads a stream and folds it with the decider: the one place where the stored events become the
 * aggregate's events. The store gives them untyped; the cast below is where upcasting of old event
 * versions goes (a `v` in an event's data whose shape has changed is brought up to date here, when
 * read, never rewritten in the log).
 */
export async function aggregateStream<Event extends DomainEvent, State>(
  store: EventStore,
  streamId: string,
  decider: Pick<Decider<unknown, Event, State>, 'evolve' | 'initialState'>,
): Promise<AggregatedStream<Event, State>> {
  const stored = await store.readStream(streamId);
  const events = stored as unknown as Event[];
  return { state: fold(decider, events), events, revision: stored.at(-1)?.revision };
}

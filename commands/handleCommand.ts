import { setTimeout as sleep } from 'node:timers/promises';
import type { Decider, DomainEvent } from '../domain/shared/decider';
import {
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
} from '../stores/eventstore/eventStore';
import { aggregateStream } from './aggregateStream';
import { eventId, eventMetadata, type CommandContext } from './commandContext';

export interface HandledCommand<Event extends DomainEvent, State> {
  events: Event[];
  state: State;
  /** Undefined when the decider decided nothing and nothing was appended. */
  appended: AppendResult | undefined;
}

/**
 * Racing commands on one aggregate each lose a round to one winner (appends made at once are
 * committed together, so they also conflict together): enough attempts, with random backoff
 * spreading the retries, for a dozen at once.
 */
const MAX_ATTEMPTS = 8;

/**
 * Reads the stream, folds it, decides and appends with the revision just read (or "no stream"
 * when it was empty, which makes creation safe). A revision conflict means another command won
 * the race: re-read and decide again, a bounded number of times, so no update is ever lost.
 * `newStream`: the caller has just allocated the stream's id, so the first attempt decides on the
 * initial state without reading; should the stream exist after all, the "no stream" append is
 * refused and the next attempt reads it as usual.
 */
export async function handleCommand<Command, Event extends DomainEvent, State>(
  store: EventStore,
  streamId: string,
  decider: Decider<Command, Event, State>,
  command: Command,
  ctx: CommandContext,
  options: { newStream?: boolean } = {},
): Promise<HandledCommand<Event, State>> {
  for (let attempt = 1; ; attempt++) {
    const { state, revision } = attempt === 1 && options.newStream ? { state: decider.initialState(), revision: undefined } : await aggregateStream(store, streamId, decider);
    const events = decider.decide(command, state);
    const newState = events.reduce(decider.evolve, state);
    if (events.length === 0) return { events, state: newState, appended: undefined };
    const expected: ExpectedRevision = revision ?? 'no_stream';
    try {
      const appended = await store.appendToStream(streamId, toNewEvents(events, ctx), expected);
      return { events, state: newState, appended };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw error;
      await sleep(5 * 2 ** Math.min(attempt, 5) * Math.random());
    }
  }
}

export function toNewEvents(events: readonly DomainEvent[], ctx: CommandContext): NewEvent[] {
  const metadata = eventMetadata(ctx);
  return events.map((e, i) => ({ id: eventId(ctx, i), type: e.type, data: { ...e.data }, metadata }));
}

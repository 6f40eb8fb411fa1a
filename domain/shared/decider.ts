// The decider: three pure members. Time, ids and randomness come in with the command, so a decider
// can be specified as "given these events, when this command, then these events".

export type DomainEvent<Type extends string = string, Data extends Record<string, unknown> = Record<string, unknown>> = Readonly<{
  type: Type;
  data: Data;
}>;

export interface Decider<Command, Event extends DomainEvent, State> {
  /** Decides which events the command causes; throws a DomainError when it is refused. */
  decide(command: Command, state: State): Event[];
  evolve(state: State, event: Event): State;
  initialState(): State;
}

export function fold<Event extends DomainEvent, State>(decider: Pick<Decider<unknown, Event, State>, 'evolve' | 'initialState'>, events: readonly Event[]): State {
  return events.reduce((state, event) => decider.evolve(state, event), decider.initialState());
}

import { expect } from 'vitest';
import { fold, type Decider, type DomainEvent } from '../../domain/shared/decider';

/**
 * Given/when/then for deciders:
 *   spec.given([...events]).when(command).then([...events])
 *   spec.given([...events]).when(command).thenThrows(ErrorClass, /message/)
 */
export function deciderSpecification<Command, Event extends DomainEvent, State>(decider: Decider<Command, Event, State>) {
  return {
    given(history: readonly Event[]) {
      return {
        when(command: Command) {
          const run = () => decider.decide(command, fold(decider, history));
          return {
            then(expected: readonly Event[]) {
              expect(run()).toEqual(expected);
            },
            thenMatches(check: (events: Event[]) => void) {
              check(run());
            },
            thenThrows(errorClass: abstract new (...args: never[]) => Error, message?: RegExp) {
              let thrown: unknown;
              try {
                run();
              } catch (error) {
                thrown = error;
              }
              expect(thrown, 'the command should have been refused').toBeInstanceOf(errorClass);
              if (message) expect((thrown as Error).message).toMatch(message);
            },
          };
        },
      };
    },
  };
}

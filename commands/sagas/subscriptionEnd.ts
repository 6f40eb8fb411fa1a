import type { Logger } from 'pino';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { runUserCommand } from '../users/userCommands';

export interface SubscriptionEndDeps {
  events: EventStore;
  /** Users whose subscription is set to be canceled and whose billing period has ended by `now`. */
  due(now: Date): Promise<{ userId: number; periodEnd: string }[]>;
  log: Logger;
  intervalMs?: number;
}

/**
 * Cancels subscriptions whose billing period ended while they were set to be canceled. Time, not
 * an event, triggers it: it looks for due subscriptions at start and then every interval. Each
 * command carries an id derived from the user and the period, and the decider ignores an
 * `EndSubscription` that is early or repeated, so overlapping runs and restarts are harmless.
 */
export function startSubscriptionEnd(deps: SubscriptionEndDeps): { runOnce(now?: Date): Promise<void>; stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const runOnce = (now = new Date()): Promise<void> => {
    running = running.then(async () => {
      for (const { userId, periodEnd } of await deps.due(now)) {
        await runUserCommand(deps.events, userId, { type: 'EndSubscription', data: { now } }, {
          actor: 'system:subscriptions',
          correlationId: `subscription-end-${userId}-${periodEnd}`,
          commandId: `subscription-end-${userId}-${periodEnd}`,
          now,
        });
      }
    }).catch((error: unknown) => deps.log.error({ err: error }, 'ending subscriptions failed; retrying at the next interval'));
    return running;
  };
  const timer = setInterval(() => void runOnce(), deps.intervalMs ?? 60_000);
  timer.unref();
  void runOnce();
  return {
    runOnce,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

import type { Logger } from 'pino';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { runUserCommand } from '../users/userCommands';
import { startPeriodic, type Periodic } from './periodic';

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
export function startSubscriptionEnd(deps: SubscriptionEndDeps): Periodic {
  return startPeriodic('ending subscriptions', deps.log, deps.intervalMs ?? 60_000, async (now) => {
    for (const { userId, periodEnd } of await deps.due(now)) {
      await runUserCommand(deps.events, userId, { type: 'EndSubscription', data: { now } }, {
        actor: 'system:subscriptions',
        correlationId: `subscription-end-${userId}-${periodEnd}`,
        commandId: `subscription-end-${userId}-${periodEnd}`,
        now,
      });
    }
  });
}

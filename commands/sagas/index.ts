import type { Logger } from 'pino';
import type { EventStore } from '../../stores/eventstore/eventStore';
import type { ReadStore } from '../../stores/readstore/readStore';
import { emailDeliverySaga } from './emailDeliverySaga';
import { SagaRunner } from './sagaRunner';

export interface SagaDeps {
  events: EventStore;
  readStore: ReadStore;
  log: Logger;
  /** `smtp://` or `smtps://`; undefined: e-mails are recorded as not sent, with the reason. */
  smtpUrl: string | undefined;
}

export interface RunningSagas {
  /** Lets reactions in progress finish, stores the checkpoints and releases the sagas' connections. */
  stop(): Promise<void>;
}

/**
 * Starts every saga, each with its own runner and checkpoint. Resolves once they are started, not
 * caught up: a saga's backlog (e-mails to send) must not hold up the rest of the service.
 */
export async function startSagas(deps: SagaDeps): Promise<RunningSagas> {
  const sagas = [emailDeliverySaga({ events: deps.events, smtpUrl: deps.smtpUrl, log: deps.log.child({ saga: 'email-delivery' }) })];
  const runners = sagas.map((saga) => new SagaRunner(deps.events, deps.readStore, saga, deps.log.child({ role: 'sagas' })));
  for (const runner of runners) runner.start();
  return {
    async stop() {
      await Promise.all(runners.map((r) => r.stop()));
      await Promise.all(sagas.map((s) => s.close?.()));
    },
  };
}

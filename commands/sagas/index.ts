import type { Logger } from 'pino';
import type { EventStore } from '../../stores/eventstore/eventStore';
import type { ReadStore } from '../../stores/readstore/readStore';
import { IdAllocator } from '../idAllocator';
import { jobNotificationSaga, type JobNotificationDeps } from '../jobs/jobNotificationSaga';
import { oauthGrantEndingsSaga } from '../oauth/oauthGrantEndings';
import { tunerRunEndSaga } from '../optimize/tunerRunEndSaga';
import { emailDeliverySaga } from './emailDeliverySaga';
import { SagaRunner } from './sagaRunner';

export interface SagaDeps {
  events: EventStore;
  readStore: ReadStore;
  log: Logger;
  /** `smtp://` or `smtps://`; undefined: e-mails are recorded as not sent, with the reason. */
  smtpUrl: string | undefined;
  /**
   * Job-end e-mails: the sender, and where they go (users read model; null when the user is gone or
   * has no address). Without them that saga does not run.
   */
  jobNotifications?: Pick<JobNotificationDeps, 'mailFrom' | 'recipient'>;
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
  const sagas = [
    emailDeliverySaga({ events: deps.events, smtpUrl: deps.smtpUrl, log: deps.log.child({ saga: 'email-delivery' }) }),
    ...(deps.jobNotifications
      ? [jobNotificationSaga({ events: deps.events, ids: new IdAllocator(deps.events), ...deps.jobNotifications, log: deps.log.child({ saga: 'job-notifications' }) })]
      : []),
    tunerRunEndSaga(deps.events),
    oauthGrantEndingsSaga(deps.events, deps.readStore),
  ];
  const runners = sagas.map((saga) => new SagaRunner(deps.events, deps.readStore, saga, deps.log.child({ role: 'sagas' })));
  for (const runner of runners) runner.start();
  return {
    async stop() {
      await Promise.all(runners.map((r) => r.stop()));
      await Promise.all(sagas.map((s) => s.close?.()));
    },
  };
}

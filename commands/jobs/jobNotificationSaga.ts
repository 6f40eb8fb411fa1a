import type { Logger } from 'pino';
import { emailDecider } from '../../domain/email/emailDecider';
import { emailStream } from '../../domain/email/emailEvents';
import { jobDecider } from '../../domain/job/jobDecider';
import { jobStream, type JobEvent, type JobFinished } from '../../domain/job/jobEvents';
import type { EventStore, StoredEvent } from '../../stores/eventstore/eventStore';
import { aggregateStream } from '../aggregateStream';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';
import { sagaContext, type Saga } from '../sagas/sagaRunner';
import { runJobCommand } from './jobCommands';
import { jobNotificationStep, queueJobEndedEmail } from './jobNotificationReaction';

export const JOB_NOTIFICATION_SAGA = 'job-notifications';

export interface JobNotificationDeps {
  events: EventStore;
  ids: IdAllocator;
  /**
   * A user's address and name from the users read model; null when the user is gone, has no address,
   * or no longer collaborates on the job's project (lists are checked when set, but people leave).
   */
  recipient(userId: number, job: { projectId: number | null; organizationId: number | null }): Promise<{ email: string; name: string } | null>;
  mailFrom: string;
  log: Logger;
}

/**
 * When a job ends, e-mails the users in its notification list through the outbox (EmailQueued; the
 * delivery saga sends). The e-mail ids are drawn and recorded on the job's stream first
 * (JobNotificationsPlanned, appended once), then each e-mail is queued on its own stream under a
 * command id derived from the event: seeing JobFinished again after a restart queues nothing new.
 */
export function jobNotificationSaga(deps: JobNotificationDeps): Saga {
  return {
    name: JOB_NOTIFICATION_SAGA,
    handles: new Set<JobEvent['type']>(['JobFinished']),
    async react(event: StoredEvent) {
      const end = event.data as JobFinished['data'];
      const job = await aggregateStream(deps.events, jobStream(end.jobId), jobDecider);
      let step = jobNotificationStep(job);
      if (step.kind === 'plan') {
        const notifications = [];
        for (const userId of step.userIds) notifications.push({ userId, emailId: await deps.ids.next('email') });
        const ctx = sagaContext(JOB_NOTIFICATION_SAGA, event);
        const { state } = await runJobCommand(deps.events, { type: 'PlanJobNotifications', data: { jobId: end.jobId, notifications } }, ctx);
        // The state after the command holds the plan recorded first: an earlier run's (its ids hold) or this one's.
        step = jobNotificationStep({ events: job.events, state });
      }
      if (step.kind !== 'queue') return;
      for (const [i, n] of step.notifications.entries()) {
        if ((await deps.events.readStream(emailStream(n.emailId))).length > 0) continue;
        const to = await deps.recipient(n.userId, step.request);
        if (!to) {
          deps.log.info({ jobId: end.jobId, userId: n.userId }, 'job notification not sent: the user is gone, has no e-mail address or left the project');
          continue;
        }
        const ctx = sagaContext(JOB_NOTIFICATION_SAGA, event, { step: i + 1 });
        await handleCommand(deps.events, emailStream(n.emailId), emailDecider, queueJobEndedEmail(step.request, end, n, to, deps.mailFrom, ctx.now), ctx);
      }
    },
  };
}

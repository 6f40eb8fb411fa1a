import type { Logger } from 'pino';
import { emailDecider } from '../../domain/email/emailDecider';
import { emailStream } from '../../domain/email/emailEvents';
import { jobDecider } from '../../domain/job/jobDecider';
import { jobStream, type JobEvent, type JobFinished, type JobRequested } from '../../domain/job/jobEvents';
import { fold } from '../../domain/shared/decider';
import type { EventStore, StoredEvent } from '../../stores/eventstore/eventStore';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';
import type { QueueEmailInput } from '../emails/queueEmail';
import { sagaContext, type Saga } from '../sagas/sagaRunner';
import { runJobCommand } from './jobCommands';

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

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The e-mail telling one user how a job ended. Pure. */
export function jobEndedEmail(request: JobRequested['data'], end: JobFinished['data'], to: { userId: number; email: string; name: string }, from: string): QueueEmailInput {
  const outcome = end.finishedSuccessful ? 'finished successfully' : end.cancelled ? 'was cancelled' : 'failed';
  const where = request.projectId !== null ? ` in project ${request.projectId}` : '';
  const lines = [
    `Hi ${to.name},`,
    `Job ${request.jobId} (${request.category})${where} ${outcome}.`,
    ...(end.reason ? [`Reason: ${end.reason}`] : []),
  ];
  return {
    userId: to.userId,
    projectId: request.projectId,
    from,
    to: to.email,
    subject: `Job ${request.jobId} (${request.category}) ${outcome}`.slice(0, 200),
    bodyText: lines.join('\n\n'),
    bodyHTML: lines.map((l) => `<p>${escape(l)}</p>`).join('\n'),
  };
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
      const stream = jobStream(end.jobId);
      const history = (await deps.events.readStream(stream)) as unknown as JobEvent[];
      const request = history[0]?.type === 'JobRequested' ? history[0].data : undefined;
      const state = fold(jobDecider, history);
      if (!request || state.status !== 'finished') return;
      let planned = history.find((e) => e.type === 'JobNotificationsPlanned')?.data.notifications;
      if (!planned) {
        if (state.jobNotificationUids.length === 0) return;
        const notifications = [];
        for (const userId of state.jobNotificationUids) notifications.push({ userId, emailId: await deps.ids.next('email') });
        const ctx = sagaContext(JOB_NOTIFICATION_SAGA, event);
        const { state: after } = await runJobCommand(deps.events, { type: 'PlanJobNotifications', data: { jobId: end.jobId, notifications } }, ctx);
        // Planned by an earlier run (its ids hold) or by this one.
        planned = after.status === 'none' ? [] : ((await deps.events.readStream(stream)) as unknown as JobEvent[]).find((e) => e.type === 'JobNotificationsPlanned')?.data.notifications ?? [];
      }
      for (const [i, n] of planned.entries()) {
        if ((await deps.events.readStream(emailStream(n.emailId))).length > 0) continue;
        const to = await deps.recipient(n.userId, request);
        if (!to) {
          deps.log.info({ jobId: end.jobId, userId: n.userId }, 'job notification not sent: the user is gone, has no e-mail address or left the project');
          continue;
        }
        const ctx = sagaContext(JOB_NOTIFICATION_SAGA, event, { step: i + 1 });
        const email = jobEndedEmail(request, end, { userId: n.userId, ...to }, deps.mailFrom);
        await handleCommand(deps.events, emailStream(n.emailId), emailDecider, { type: 'QueueEmail', data: { ...email, emailId: n.emailId, now: ctx.now } }, ctx);
      }
    },
  };
}

import type { EmailCommand } from '../../domain/email/emailDecider';
import type { JobState } from '../../domain/job/jobDecider';
import type { JobEvent, JobFinished, JobNotification, JobRequested } from '../../domain/job/jobEvents';
import type { QueueEmailInput } from '../emails/queueEmail';

/** What the notification saga does about a job's end, given the job's stream as it reads it. */
export type JobNotificationStep =
  /** Nobody to e-mail, or the stream does not show the job as requested and ended. */
  | { kind: 'none' }
  /** Draw one e-mail id for each of these users and record them on the job's stream (PlanJobNotifications) first. */
  | { kind: 'plan'; userIds: readonly number[] }
  /** The e-mails are planned: queue each one not queued yet. */
  | { kind: 'queue'; request: JobRequested['data']; notifications: readonly JobNotification[] };

/**
 * The notification saga's decision, pure: the job's events and state in, the next step out. Called
 * again with the state after planning, which holds the plan recorded first, whichever run recorded it.
 */
export function jobNotificationStep(job: { events: readonly JobEvent[]; state: JobState }): JobNotificationStep {
  const first = job.events[0];
  if (first?.type !== 'JobRequested' || job.state.status !== 'finished') return { kind: 'none' };
  const planned = job.state.plannedNotifications;
  if (planned !== null) return { kind: 'queue', request: first.data, notifications: planned };
  return job.state.jobNotificationUids.length === 0 ? { kind: 'none' } : { kind: 'plan', userIds: job.state.jobNotificationUids };
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

/** The command that queues one planned e-mail, under the id the plan drew for it. Pure. */
export function queueJobEndedEmail(
  request: JobRequested['data'],
  end: JobFinished['data'],
  notification: JobNotification,
  to: { email: string; name: string },
  from: string,
  now: Date,
): EmailCommand {
  const email = jobEndedEmail(request, end, { userId: notification.userId, ...to }, from);
  return { type: 'QueueEmail', data: { ...email, emailId: notification.emailId, now } };
}

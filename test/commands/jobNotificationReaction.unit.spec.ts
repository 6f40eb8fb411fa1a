// The job notification saga's decision, given the job's stream, and the e-mail command it sends.
import { describe, expect, it } from 'vitest';
import { jobNotificationStep, queueJobEndedEmail, type JobNotificationStep } from '../../commands/jobs/jobNotificationReaction';
import { jobDecider } from '../../domain/job/jobDecider';
import type { JobEvent, JobFinished, JobRequested } from '../../domain/job/jobEvents';
import { fold } from '../../domain/shared/decider';

const requested: JobRequested = {
  type: 'JobRequested',
  data: { jobId: 9, projectId: 4, organizationId: null, category: 'Generate features', categoryKey: 'generate-features', key: '3', parameters: {}, jobNotificationUids: [1, 2], createdByUserId: 1, created: '2026-11-25T10:00:00.000Z' },
};
const started: JobEvent = { type: 'JobStarted', data: { jobId: 9, workerId: 'w1', attempt: 1, started: '2026-11-25T10:00:01.000Z' } };
const finished: JobFinished = { type: 'JobFinished', data: { jobId: 9, finishedSuccessful: true, cancelled: false, reason: null, computeTimeMs: 1000, finished: '2026-11-25T10:00:02.000Z' } };
const planned = (notifications: { userId: number; emailId: number }[]): JobEvent => ({ type: 'JobNotificationsPlanned', data: { jobId: 9, notifications } });

/** Given the job's stream, then the saga's next step. */
const given = (events: JobEvent[]) => ({
  then: (expected: JobNotificationStep) => expect(jobNotificationStep({ events, state: fold(jobDecider, events) })).toEqual(expected),
});

describe('a job that has not ended', () => {
  it('is nobody to e-mail yet', () => {
    given([requested, started]).then({ kind: 'none' });
  });
});

describe('an ended job', () => {
  it('plans one e-mail for each user in its notification list first', () => {
    given([requested, started, finished]).then({ kind: 'plan', userIds: [1, 2] });
  });

  it('with nobody in its notification list e-mails nobody', () => {
    const nobody: JobRequested = { ...requested, data: { ...requested.data, jobNotificationUids: [] } };
    given([nobody, started, finished]).then({ kind: 'none' });
  });

  it('whose list changed before it ended plans e-mails for the list as it is at the end', () => {
    given([requested, { type: 'JobNotificationsUpdated', data: { jobId: 9, jobNotificationUids: [2] } }, started, finished]).then({ kind: 'plan', userIds: [2] });
  });

  it('whose e-mails are planned queues those, with the ids drawn then (seen again after a restart, it plans nothing new)', () => {
    given([requested, started, finished, planned([{ userId: 1, emailId: 30 }, { userId: 2, emailId: 31 }])]).then({
      kind: 'queue',
      request: requested.data,
      notifications: [{ userId: 1, emailId: 30 }, { userId: 2, emailId: 31 }],
    });
  });

  it('planned by another run meanwhile keeps that run\'s ids: the state after planning holds the first plan', () => {
    const history = [requested, started, finished];
    const earlier = [...history, planned([{ userId: 1, emailId: 30 }, { userId: 2, emailId: 31 }])];
    const mine = jobDecider.decide({ type: 'PlanJobNotifications', data: { jobId: 9, notifications: [{ userId: 1, emailId: 40 }, { userId: 2, emailId: 41 }] } }, fold(jobDecider, earlier));
    expect(mine).toEqual([]);
    expect(jobNotificationStep({ events: history, state: fold(jobDecider, earlier) })).toEqual({
      kind: 'queue',
      request: requested.data,
      notifications: [{ userId: 1, emailId: 30 }, { userId: 2, emailId: 31 }],
    });
  });

  it('whose stream does not start with its request e-mails nobody', () => {
    given([started, finished]).then({ kind: 'none' });
  });
});

describe('the e-mail of one planned notification', () => {
  it('is queued under the id the plan drew, to the address the users read model gives, at the saga\'s time', () => {
    const now = new Date('2026-11-25T10:00:03.000Z');
    const command = queueJobEndedEmail(requested.data, finished.data, { userId: 2, emailId: 31 }, { email: 'bo@example.com', name: 'Bo' }, 'no-reply@example.com', now);
    expect(command).toEqual({
      type: 'QueueEmail',
      data: {
        emailId: 31,
        userId: 2,
        projectId: 4,
        from: 'no-reply@example.com',
        to: 'bo@example.com',
        subject: 'Job 9 (Generate features) finished successfully',
        bodyText: 'Hi Bo,\n\nJob 9 (Generate features) in project 4 finished successfully.',
        bodyHTML: '<p>Hi Bo,</p>\n<p>Job 9 (Generate features) in project 4 finished successfully.</p>',
        now,
      },
    });
  });
});

import { describe, expect, it } from 'vitest';
import { jobDecider, JOB_OUTPUT_BATCH_MAX_LINES, type JobCommand } from '../../domain/job/jobDecider';
import type { JobEvent } from '../../domain/job/jobEvents';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(jobDecider);
const t0 = new Date('2026-11-25T10:00:00.000Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const iso = (seconds: number) => at(seconds).toISOString();

const request = (overrides: Partial<Extract<JobCommand, { type: 'RequestJob' }>['data']> = {}): JobCommand => ({
  type: 'RequestJob',
  data: {
    jobId: 7,
    projectId: 3,
    organizationId: null,
    category: 'Generate features',
    categoryKey: 'generate-features',
    key: '2',
    parameters: { dspId: 2 },
    jobNotificationUids: [1, 2, 1],
    createdByUserId: 1,
    now: t0,
    ...overrides,
  },
});
const requested: JobEvent = {
  type: 'JobRequested',
  data: { jobId: 7, projectId: 3, organizationId: null, category: 'Generate features', categoryKey: 'generate-features', key: '2', parameters: { dspId: 2 }, jobNotificationUids: [1, 2], createdByUserId: 1, created: iso(0) },
};
const started = (workerId = 'w1', attempt = 1, s = 1): JobEvent => ({ type: 'JobStarted', data: { jobId: 7, workerId, attempt, started: iso(s) } });
const start = (workerId = 'w1', s = 1): JobCommand => ({ type: 'StartJob', data: { jobId: 7, workerId, now: at(s) } });
const line = (data: string, s = 2, logLevel: 'info' | 'warn' | 'error' | 'debug' = 'info') => ({ created: iso(s), data, logLevel });
const write = (lines: ReturnType<typeof line>[], workerId = 'w1', attempt = 1): JobCommand => ({ type: 'WriteJobOutput', data: { jobId: 7, workerId, attempt, lines } });
const finish = (successful: boolean, overrides: Partial<Extract<JobCommand, { type: 'FinishJob' }>['data']> = {}): JobCommand => ({
  type: 'FinishJob',
  data: { jobId: 7, workerId: 'w1', attempt: 1, successful, reason: successful ? null : 'Out of memory', computeTimeMs: 1500, now: at(3), ...overrides },
});
const cancel = (force: boolean, s = 2): JobCommand => ({ type: 'RequestJobCancel', data: { jobId: 7, force, userId: 1, now: at(s) } });
const recover = (s: number, workerId = 'w2', maxAttempts = 2): JobCommand => ({ type: 'RecoverJob', data: { jobId: 7, workerId, now: at(s), leaseMs: 30_000, maxAttempts } });
const finished = (successful: boolean, extra: Partial<Extract<JobEvent, { type: 'JobFinished' }>['data']> = {}): JobEvent => ({
  type: 'JobFinished',
  data: { jobId: 7, finishedSuccessful: successful, cancelled: false, reason: successful ? null : 'Out of memory', computeTimeMs: 1500, finished: iso(3), ...extra },
});

describe('a job not yet requested', () => {
  it('is requested with its fields, its notification list without repeats', () => {
    spec.given([]).when(request()).then([requested]);
  });

  it('refuses text, parameters and ids that a read model could not hold', () => {
    spec.given([]).when(request({ category: '' })).thenThrows(ValidationError, /category/);
    spec.given([]).when(request({ categoryKey: 'a\u202eb' })).thenThrows(ValidationError, /categoryKey/);
    spec.given([]).when(request({ key: 'x'.repeat(257) })).thenThrows(ValidationError, /key/);
    spec.given([]).when(request({ parameters: { 'a.b': 1 } })).thenThrows(ValidationError, /parameters/);
    spec.given([]).when(request({ parameters: { x: Number.NaN } })).thenThrows(ValidationError, /parameters/);
    spec.given([]).when(request({ jobNotificationUids: [0] })).thenThrows(ValidationError, /jobNotificationUids/);
    spec.given([]).when(request({ jobNotificationUids: Array.from({ length: 1001 }, (_, i) => i + 1) })).thenThrows(ValidationError, /at most 1000/);
  });

  it('cannot be started, cancelled, finished or updated', () => {
    spec.given([]).when(start()).thenThrows(NotFoundError, /Job 7 not found/);
    spec.given([]).when(cancel(false)).thenThrows(NotFoundError);
    spec.given([]).when(finish(true)).thenThrows(NotFoundError);
    spec.given([]).when({ type: 'UpdateJobNotifications', data: { jobId: 7, jobNotificationUids: [1], allowedUids: [1] } }).thenThrows(NotFoundError);
  });
});

describe('a requested job', () => {
  it('cannot be requested again', () => {
    spec.given([requested]).when(request()).thenThrows(ConflictError, /exists already/);
  });

  it('is claimed by the first worker, as attempt 1', () => {
    spec.given([requested]).when(start('w1')).then([started('w1')]);
  });

  it('takes no output, heartbeat or end from a worker that has not claimed it', () => {
    spec.given([requested]).when(write([line('hello\n')])).thenThrows(ConflictError, /not run by worker w1/);
    spec.given([requested]).when(finish(true)).thenThrows(ConflictError, /not run by worker/);
    spec.given([requested]).when({ type: 'RecordJobHeartbeat', data: { jobId: 7, workerId: 'w1', attempt: 1, now: at(2) } }).thenThrows(ConflictError);
  });

  it('ends at once when cancelled, with or without force: no worker runs it', () => {
    spec.given([requested]).when(cancel(false)).then([
      { type: 'JobCancelRequested', data: { jobId: 7, force: false, requestedByUserId: 1, requested: iso(2) } },
      finished(false, { cancelled: true, reason: 'Cancelled before it started', computeTimeMs: 0, finished: iso(2) }),
    ]);
  });

  it('cannot be recovered: nobody claimed it', () => {
    spec.given([requested]).when(recover(100)).thenThrows(ConflictError, /not been started/);
  });
});

describe('a started job', () => {
  it('refuses a second claim: exactly one worker runs it', () => {
    spec.given([requested, started('w1')]).when(start('w2')).thenThrows(ConflictError, /claimed by worker w1/);
  });

  it('records output batches from its worker', () => {
    spec.given([requested, started()]).when(write([line('a\n'), line('b\n', 2, 'warn')])).then([{ type: 'JobOutputWritten', data: { jobId: 7, lines: [line('a\n'), line('b\n', 2, 'warn')] } }]);
  });

  it('refuses output from another worker or an earlier attempt', () => {
    spec.given([requested, started('w1')]).when(write([line('a')], 'w2')).thenThrows(ConflictError, /not run by worker w2/);
    spec.given([requested, started('w1'), started('w2', 2, 40)]).when(write([line('a')], 'w1', 1)).thenThrows(ConflictError);
  });

  it('refuses output batches that are empty, too long, or hold refused text', () => {
    spec.given([requested, started()]).when(write([])).thenThrows(ValidationError, /at least one line/);
    spec.given([requested, started()]).when(write(Array.from({ length: JOB_OUTPUT_BATCH_MAX_LINES + 1 }, () => line('x')))).thenThrows(ValidationError, /at most 500 lines/);
    spec.given([requested, started()]).when(write([line('x'.repeat(10_001))])).thenThrows(ValidationError, /at most 10000/);
    spec.given([requested, started()]).when(write([line('bell\u0007')])).thenThrows(ValidationError, /control character/);
    spec.given([requested, started()]).when(write([{ created: 'yesterday', data: 'x', logLevel: 'info' }])).thenThrows(ValidationError, /created/);
    spec.given([requested, started()]).when(write([{ created: iso(2), data: 'x', logLevel: 'verbose' as 'info' }])).thenThrows(ValidationError, /logLevel/);
  });

  it('records a heartbeat of its worker', () => {
    spec.given([requested, started()]).when({ type: 'RecordJobHeartbeat', data: { jobId: 7, workerId: 'w1', attempt: 1, now: at(20) } }).then([
      { type: 'JobHeartbeat', data: { jobId: 7, workerId: 'w1', attempt: 1, at: iso(20) } },
    ]);
  });

  it('finishes successfully, or failed with its reason', () => {
    spec.given([requested, started()]).when(finish(true)).then([finished(true)]);
    spec.given([requested, started()]).when(finish(false)).then([finished(false)]);
  });

  it('refuses a compute time that is not a finite whole number in range', () => {
    spec.given([requested, started()]).when(finish(true, { computeTimeMs: Number.POSITIVE_INFINITY })).thenThrows(ValidationError, /Compute time/);
    spec.given([requested, started()]).when(finish(true, { computeTimeMs: -1 })).thenThrows(ValidationError, /Compute time/);
    spec.given([requested, started()]).when(finish(false, { reason: 'line\nbreak' })).thenThrows(ValidationError, /Reason/);
  });

  it('is asked to stop when cancelled without force; asking again adds nothing', () => {
    const asked: JobEvent = { type: 'JobCancelRequested', data: { jobId: 7, force: false, requestedByUserId: 1, requested: iso(2) } };
    spec.given([requested, started()]).when(cancel(false)).then([asked]);
    spec.given([requested, started(), asked]).when(cancel(false)).then([]);
  });

  it('ends not successful and cancelled after a cancel request, whatever its runner answers', () => {
    const asked: JobEvent = { type: 'JobCancelRequested', data: { jobId: 7, force: false, requestedByUserId: 1, requested: iso(2) } };
    spec.given([requested, started(), asked]).when(finish(true)).then([finished(false, { cancelled: true, reason: 'Cancelled' })]);
    spec.given([requested, started(), asked]).when(finish(false, { reason: 'Cancelled by the user' })).then([finished(false, { cancelled: true, reason: 'Cancelled by the user' })]);
  });

  it('ends at once when cancelled with force, counting the time since it started', () => {
    spec.given([requested, started('w1', 1, 1)]).when(cancel(true, 11)).then([
      { type: 'JobCancelRequested', data: { jobId: 7, force: true, requestedByUserId: 1, requested: iso(11) } },
      finished(false, { cancelled: true, reason: 'Cancelled (forced)', computeTimeMs: 10_000, finished: iso(11) }),
    ]);
  });

  it('is not recovered while its worker shows signs of life (start, output, heartbeat)', () => {
    spec.given([requested, started('w1', 1, 1)]).when(recover(30)).thenThrows(ConflictError, /alive/);
    spec.given([requested, started('w1', 1, 1), { type: 'JobOutputWritten', data: { jobId: 7, lines: [line('x', 25)] } }]).when(recover(50)).thenThrows(ConflictError, /alive 25 s ago/);
    spec.given([requested, started('w1', 1, 1), { type: 'JobHeartbeat', data: { jobId: 7, workerId: 'w1', attempt: 1, at: iso(40) } }]).when(recover(60)).thenThrows(ConflictError, /alive/);
  });

  it('is retried by the recovering worker when its worker went silent on the first attempt', () => {
    spec.given([requested, started('w1', 1, 1), { type: 'JobHeartbeat', data: { jobId: 7, workerId: 'w1', attempt: 1, at: iso(10) } }]).when(recover(45)).then([
      { type: 'JobOutputWritten', data: { jobId: 7, lines: [{ created: iso(45), data: 'Worker w1 stopped responding: no sign of life for 35 s (attempt 1 of 2); retrying\n', logLevel: 'warn' }] } },
      started('w2', 2, 45),
    ]);
  });

  it('fails with a clear reason when the last attempt goes silent, its compute time up to the last sign of life', () => {
    spec.given([requested, started('w1', 1, 1), started('w2', 2, 40)]).when(recover(100, 'w3')).thenMatches((events) => {
      expect(events.map((e) => e.type)).toEqual(['JobOutputWritten', 'JobFinished']);
      expect(events[1]!.data).toEqual({ jobId: 7, finishedSuccessful: false, cancelled: false, reason: 'Worker w2 stopped responding: no sign of life for 60 s (attempt 2 of 2)', computeTimeMs: 0, finished: iso(100) });
    });
  });

  it('ends cancelled when its worker went silent after a cancel request', () => {
    const asked: JobEvent = { type: 'JobCancelRequested', data: { jobId: 7, force: false, requestedByUserId: 1, requested: iso(2) } };
    spec.given([requested, started('w1', 1, 1), asked]).when(recover(60)).thenMatches((events) => {
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ type: 'JobFinished', data: { finishedSuccessful: false, cancelled: true } });
      expect(String((events[0]!.data as { reason?: unknown }).reason)).toMatch(/^Cancelled; Worker w1 stopped responding/);
    });
  });
});

describe('a finished job', () => {
  const history = [requested, started(), finished(true)];

  it('refuses a claim, output, cancel, end or recovery', () => {
    spec.given(history).when(start('w2')).thenThrows(ConflictError, /already finished/);
    spec.given(history).when(write([line('late')])).thenThrows(ConflictError, /already finished/);
    spec.given(history).when(cancel(true)).thenThrows(ConflictError, /already finished/);
    spec.given(history).when(finish(false)).thenThrows(ConflictError, /already finished/);
    spec.given(history).when(recover(1000)).thenThrows(ConflictError, /already finished/);
  });

  it('records its notification e-mails once', () => {
    const plan: JobCommand = { type: 'PlanJobNotifications', data: { jobId: 7, notifications: [{ userId: 1, emailId: 31 }] } };
    const planned: JobEvent = { type: 'JobNotificationsPlanned', data: { jobId: 7, notifications: [{ userId: 1, emailId: 31 }] } };
    spec.given(history).when(plan).then([planned]);
    spec.given([...history, planned]).when({ type: 'PlanJobNotifications', data: { jobId: 7, notifications: [{ userId: 1, emailId: 99 }] } }).then([]);
    spec.given([requested, started()]).when(plan).thenThrows(ConflictError, /not finished/);
  });
});

describe('the notification list of a job', () => {
  it('is replaced; the same list again adds nothing', () => {
    spec.given([requested]).when({ type: 'UpdateJobNotifications', data: { jobId: 7, jobNotificationUids: [3, 3, 4], allowedUids: [1, 2, 3, 4] } }).then([
      { type: 'JobNotificationsUpdated', data: { jobId: 7, jobNotificationUids: [3, 4] } },
    ]);
    spec.given([requested]).when({ type: 'UpdateJobNotifications', data: { jobId: 7, jobNotificationUids: [2, 1], allowedUids: [1, 2, 3, 4] } }).then([]);
  });

  it('refuses ids that are not positive integers', () => {
    spec.given([requested]).when({ type: 'UpdateJobNotifications', data: { jobId: 7, jobNotificationUids: [1.5], allowedUids: [1] } }).thenThrows(ValidationError, /jobNotificationUids/);
  });

  it("refuses anyone who is not one of the project's collaborators, and records nothing", () => {
    spec.given([requested]).when({ type: 'UpdateJobNotifications', data: { jobId: 7, jobNotificationUids: [1, 9], allowedUids: [1, 2] } }).thenThrows(ValidationError, /user 9 is not a collaborator/);
    spec.given([requested]).when({ type: 'UpdateJobNotifications', data: { jobId: 7, jobNotificationUids: [3], allowedUids: [] } }).thenThrows(ValidationError, /not a collaborator/);
  });
});

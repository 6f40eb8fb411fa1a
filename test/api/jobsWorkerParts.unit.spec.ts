// The pure parts of the job sagas (their decisions and the e-mail they write) and the output batcher.
import { describe, expect, it } from 'vitest';
import { jobEndedEmail } from '../../commands/jobs/jobNotificationReaction';
import { PROJECT_DELETED_REASON, workerReaction } from '../../commands/jobs/jobWorkerReaction';
import { OutputBatcher } from '../../commands/jobs/outputBatcher';
import { jobDecider } from '../../domain/job/jobDecider';
import type { JobOutputLine, JobRequested } from '../../domain/job/jobEvents';
import { textProblem } from '../../domain/shared/textRules';
import { JOB_OUTPUT_LINE_RULE } from '../../domain/job/jobDecider';

const requested: JobRequested = {
  type: 'JobRequested',
  data: { jobId: 9, projectId: 4, organizationId: null, category: 'Generate features', categoryKey: 'generate-features', key: '3', parameters: {}, jobNotificationUids: [1], createdByUserId: 1, created: '2026-11-25T10:00:00.000Z' },
};

describe('the job worker saga decision', () => {
  const facts = (runner: boolean, here: boolean, ofProject: Record<number, number[]> = {}) => ({ hasRunner: () => runner, runsHere: () => here, runningFor: (projectId: number) => ofProject[projectId] ?? [] });

  it('claims a requested job it has a runner for, and only then', () => {
    expect(workerReaction(requested, facts(true, false))).toEqual([{ kind: 'claim', jobId: 9 }]);
    expect(workerReaction(requested, facts(false, false))).toEqual([]);
  });

  it('stops a job running here when it is asked to cancel or ended elsewhere; ignores other jobs', () => {
    const cancel = { type: 'JobCancelRequested', data: { jobId: 9, force: false, requestedByUserId: 1, requested: '2026-11-25T10:00:01.000Z' } } as const;
    const forced = { ...cancel, data: { ...cancel.data, force: true } };
    const ended = { type: 'JobFinished', data: { jobId: 9, finishedSuccessful: false, cancelled: true, reason: 'Cancelled (forced)', computeTimeMs: 5, finished: '2026-11-25T10:00:02.000Z' } } as const;
    expect(workerReaction(cancel, facts(true, true))).toEqual([{ kind: 'stop', jobId: 9, reason: 'Cancelled', endedElsewhere: false }]);
    expect(workerReaction(forced, facts(true, true))).toEqual([{ kind: 'stop', jobId: 9, reason: 'Cancelled', endedElsewhere: true }]);
    expect(workerReaction(ended, facts(true, true))).toEqual([{ kind: 'stop', jobId: 9, reason: 'Cancelled (forced)', endedElsewhere: true }]);
    expect(workerReaction(cancel, facts(true, false))).toEqual([]);
    expect(workerReaction(ended, facts(true, false))).toEqual([]);
  });

  it("stops every job of a deleted project running here, saying why; others' jobs run on", () => {
    const deleted = { type: 'ProjectDeleted', data: { projectId: 4, deletedDate: '2026-11-25T10:00:03.000Z', scheduledFullDeletionDate: '2026-12-25T10:00:03.000Z' } } as const;
    expect(workerReaction(deleted, facts(true, true, { 4: [9, 11], 5: [12] }))).toEqual([
      { kind: 'stop', jobId: 9, reason: PROJECT_DELETED_REASON, endedElsewhere: false },
      { kind: 'stop', jobId: 11, reason: PROJECT_DELETED_REASON, endedElsewhere: false },
    ]);
    expect(PROJECT_DELETED_REASON).toMatch(/project was deleted/);
    expect(workerReaction(deleted, facts(true, false, { 5: [12] }))).toEqual([]);
  });
});

describe('the job-end e-mail', () => {
  it('says how the job ended, with the reason, and escapes the HTML', () => {
    const email = jobEndedEmail(
      { ...requested.data, category: 'Train <model>' },
      { jobId: 9, finishedSuccessful: false, cancelled: false, reason: 'Out of memory', computeTimeMs: 10, finished: '2026-11-25T10:00:02.000Z' },
      { userId: 1, email: 'ada@example.com', name: 'Ada' },
      'no-reply@example.com',
    );
    expect(email).toMatchObject({ userId: 1, projectId: 4, to: 'ada@example.com', from: 'no-reply@example.com', subject: 'Job 9 (Train <model>) failed' });
    expect(email.bodyText).toBe('Hi Ada,\n\nJob 9 (Train <model>) in project 4 failed.\n\nReason: Out of memory');
    expect(email.bodyHTML).toContain('Train &#60;model&#62;');
  });
});

describe('the output batcher', () => {
  it('appends every 100 lines at once, the rest after the delay, in order', async () => {
    const batches: JobOutputLine[][] = [];
    const batcher = new OutputBatcher(async (lines) => void batches.push(lines), { flushMs: 50, maxLines: 100 });
    for (let i = 0; i < 250; i++) batcher.add(`line ${i}`);
    // The full batches are appended without waiting for the delay (appends run one after another).
    await new Promise((r) => setImmediate(r));
    expect(batches.map((b) => b.length)).toEqual([100, 100]);
    await new Promise((r) => setTimeout(r, 120));
    expect(batches.map((b) => b.length)).toEqual([100, 100, 50]);
    expect(batches.flat().map((l) => l.data)).toEqual(Array.from({ length: 250 }, (_, i) => `line ${i}\n`));
  });

  it('makes any text a runner writes acceptable to the decider', async () => {
    const batches: JobOutputLine[][] = [];
    const batcher = new OutputBatcher(async (lines) => void batches.push(lines), { flushMs: 10, maxLines: 100 });
    batcher.add('bell \u0007 and \u202e override', 'warn');
    batcher.add('x'.repeat(50_000), 'error');
    batcher.add('already ends\n', 'debug');
    await batcher.flush();
    const lines = batches.flat();
    for (const l of lines) expect(textProblem(l.data, 'line', JOB_OUTPUT_LINE_RULE)).toBeUndefined();
    expect(lines.map((l) => [l.data.length > 100 ? l.data.length : l.data, l.logLevel])).toEqual([['bell \uFFFD and \uFFFD override\n', 'warn'], [10_000, 'error'], ['already ends\n', 'debug']]);
    // A batch the decider accepts as it is.
    const state = [
      requested,
      { type: 'JobStarted' as const, data: { jobId: 9, workerId: 'w', attempt: 1, started: '2026-11-25T10:00:01.000Z' } },
    ].reduce(jobDecider.evolve, jobDecider.initialState());
    expect(() => jobDecider.decide({ type: 'WriteJobOutput', data: { jobId: 9, workerId: 'w', attempt: 1, lines } }, state)).not.toThrow();
  });
});

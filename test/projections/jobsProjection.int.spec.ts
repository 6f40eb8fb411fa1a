import { describe, expect, it } from 'vitest';
import type { JobEvent } from '../../domain/job/jobEvents';
import { jobsProjection } from '../../projections/jobs/jobsProjection';
import { JobQueries } from '../../projections/jobs/jobQueries';
import { JOB_CATEGORY_COUNTS, JOB_COMPUTE_TIME, JOB_OUTPUT, JOBS } from '../../projections/jobs/jobDocument';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';

const at = (minute: number, day = 25, month = 11) => `2026-${String(month).padStart(2, '0')}-${day}T12:${String(minute).padStart(2, '0')}:00.000Z`;

const requested = (jobId: number, minute: number, overrides: Partial<Extract<JobEvent, { type: 'JobRequested' }>['data']> = {}): JobEvent => ({
  type: 'JobRequested',
  data: { jobId, projectId: 10, organizationId: null, category: 'Generate features', categoryKey: 'generate-features', key: '3', parameters: { 'a.b': 1 }, jobNotificationUids: [1], createdByUserId: 1, created: at(minute), ...overrides },
});
const started = (jobId: number, minute: number): JobEvent => ({ type: 'JobStarted', data: { jobId, workerId: 'w1', attempt: 1, started: at(minute) } });
const output = (jobId: number, minute: number, ...lines: [string, 'error' | 'warn' | 'info' | 'debug'][]): JobEvent => ({
  type: 'JobOutputWritten',
  data: { jobId, lines: lines.map(([data, logLevel]) => ({ created: at(minute), data, logLevel })) },
});
const finished = (jobId: number, successful: boolean, computeTimeMs: number, finishedAt = at(30)): JobEvent => ({
  type: 'JobFinished',
  data: { jobId, finishedSuccessful: successful, cancelled: false, reason: successful ? null : 'Broke', computeTimeMs, finished: finishedAt },
});

/**
 * Applies the events in log order through the jobs projection, each one twice in a row (delivery is
 * at least once), and, when `replayAll`, the whole log again at the end (a crash before the checkpoint).
 */
async function project(events: JobEvent[], options: { twice?: boolean; replayAll?: boolean } = {}): Promise<MemoryReadStore> {
  const store = new MemoryReadStore();
  const stored: StoredEvent[] = events.map((e, i) => ({
    id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
    type: e.type,
    data: { ...e.data },
    metadata: { actor: 'system:test', correlationId: 'jobs', time: at(0) },
    streamId: `job-${String(e.data.jobId)}`,
    revision: 0n,
    position: BigInt(i + 1),
  }));
  for (const e of stored) {
    await jobsProjection.apply(e, store);
    if (options.twice) await jobsProjection.apply(e, store);
  }
  if (options.replayAll) for (const e of stored) await jobsProjection.apply(e, store);
  return store;
}

async function dump(store: MemoryReadStore): Promise<unknown[]> {
  return Promise.all([JOBS, JOB_OUTPUT, JOB_COMPUTE_TIME, JOB_CATEGORY_COUNTS].map((c) => store.collection(c).find({}, { sort: { _id: 1 } })));
}

const history: JobEvent[] = [
  requested(1, 1),
  started(1, 2),
  output(1, 3, ['loading\n', 'info'], ['odd sample\n', 'warn']),
  { type: 'JobHeartbeat', data: { jobId: 1, workerId: 'w1', attempt: 1, at: at(9) } },
  output(1, 10, ['debugging\n', 'debug'], ['broke\n', 'error']),
  { type: 'JobNotificationsUpdated', data: { jobId: 1, jobNotificationUids: [1, 2] } },
  { type: 'JobCancelRequested', data: { jobId: 1, force: false, requestedByUserId: 1, requested: at(11) } },
  finished(1, true, 1200),
  requested(2, 12, { key: '4' }),
  started(2, 13),
  finished(2, false, 800, at(30, 2, 12)),
  requested(3, 14, { projectId: null, organizationId: 7 }),
  { type: 'JobNotificationsPlanned', data: { jobId: 1, notifications: [{ userId: 1, emailId: 5 }] } },
];

describe('the jobs read model', () => {
  it('gives every event applied twice, and the whole log replayed, the same documents as once', async () => {
    const once = await dump(await project(history));
    expect(await dump(await project(history, { twice: true }))).toEqual(once);
    expect(await dump(await project(history, { twice: true, replayAll: true }))).toEqual(once);
  });

  it('follows a job from request to end', async () => {
    const jobs = new JobQueries(await project(history, { twice: true }));
    expect(await jobs.byId(1)).toMatchObject({
      id: 1, projectId: 10, state: 'finished', created: at(1), started: at(2), finished: at(30), finishedSuccessful: true, cancelRequested: true,
      jobNotificationUids: [1, 2], computeTimeMs: 1200, categoryCount: 1, lastSignOfLife: at(10), outputLineCount: 4, reason: null,
    });
    expect(await jobs.byId(2)).toMatchObject({ state: 'finished', finishedSuccessful: false, reason: 'Broke', categoryCount: 2 });
    // An organization's job counts apart from the project's jobs of the same category.
    expect(await jobs.byId(3)).toMatchObject({ state: 'requested', organizationId: 7, categoryCount: 1, started: null });
  });

  it('lists active, finished and filtered jobs, counting before paging', async () => {
    const jobs = new JobQueries(await project([...history, requested(4, 20), started(4, 21)]));
    expect((await jobs.active({ projectId: 10 })).map((j) => j.id)).toEqual([4]);
    expect((await jobs.active({ organizationId: 7 })).map((j) => j.id)).toEqual([3]);
    expect(await jobs.list({ projectId: 10 }, {}).then((r) => [r.jobs.map((j) => j.id), r.total])).toEqual([[4, 2, 1], 3]);
    expect(await jobs.list({ projectId: 10 }, { limit: 1, offset: 1 }).then((r) => [r.jobs.map((j) => j.id), r.total])).toEqual([[2], 3]);
    expect(await jobs.list({ projectId: 10 }, { onlyFinished: true }).then((r) => r.jobs.map((j) => j.id))).toEqual([2, 1]);
    expect(await jobs.list({ projectId: 10 }, { finished: 'successful' }).then((r) => r.jobs.map((j) => j.id))).toEqual([1]);
    expect(await jobs.list({ projectId: 10 }, { finished: 'failed' }).then((r) => r.jobs.map((j) => j.id))).toEqual([2]);
    expect(await jobs.list({ projectId: 10 }, { key: '4' }).then((r) => r.jobs.map((j) => j.id))).toEqual([2]);
    expect(await jobs.list({ projectId: 10 }, { category: 'Nope' }).then((r) => r.total)).toBe(0);
    expect(await jobs.list({ projectId: 10 }, { startDate: new Date(at(12)), endDate: new Date(at(20)) }).then((r) => r.jobs.map((j) => j.id))).toEqual([4, 2]);
    expect((await jobs.running()).map((j) => j.id)).toEqual([4]);
    expect((await jobs.waiting()).map((j) => j.id)).toEqual([3]);
  });

  it('answers the last lines of the output at a level or more severe, with the count of all that match', async () => {
    const jobs = new JobQueries(await project(history, { twice: true }));
    const all = await jobs.output(1);
    expect(all.lines.map((l) => l.data)).toEqual(['loading\n', 'odd sample\n', 'debugging\n', 'broke\n']);
    expect(all.totalCount).toBe(4);
    const last = await jobs.output(1, { limit: 2 });
    expect(last.lines.map((l) => l.data)).toEqual(['debugging\n', 'broke\n']);
    expect(last.totalCount).toBe(4);
    const warnings = await jobs.output(1, { logLevel: 'warn' });
    expect(warnings.lines.map((l) => [l.data, l.logLevel])).toEqual([['odd sample\n', 'warn'], ['broke\n', 'error']]);
    expect(warnings.totalCount).toBe(2);
    const page = await jobs.outputPage(1, all.lines[1]!._id, 10);
    expect(page.map((l) => l.data)).toEqual(['debugging\n', 'broke\n']);
  });

  it('sums the compute time of a project\'s jobs per month in which they finished', async () => {
    const jobs = new JobQueries(await project(history, { twice: true, replayAll: true }));
    expect(await jobs.computeTimeUsedMs(10, new Date(at(59)))).toBe(1200);
    expect(await jobs.computeTimeUsedMs(10, new Date(at(0, 31, 12)))).toBe(800);
    expect(await jobs.computeTimeUsedMs(11, new Date(at(59)))).toBe(0);
  });
});

import type { JobEvent } from '../../domain/job/jobEvents';
import type { ReadStore } from '../../stores/readstore/readStore';
import { defineProjection, insertOnce, positionKey, updateOnce } from '../projection';
import {
  JOB_CATEGORY_COUNTS,
  JOB_COMPUTE_TIME,
  JOB_OUTPUT,
  JOBS,
  categoryCountId,
  computeTimeId,
  jobOutputId,
  monthOf,
  type JobCategoryCountDocument,
  type JobComputeTimeDocument,
  type JobDocument,
  type JobOutputDocument,
} from './jobDocument';

const jobs = (store: ReadStore) => store.collection<JobDocument>(JOBS);
const output = (store: ReadStore) => store.collection<JobOutputDocument>(JOB_OUTPUT);
const computeTime = (store: ReadStore) => store.collection<JobComputeTimeDocument>(JOB_COMPUTE_TIME);
const categoryCounts = (store: ReadStore) => store.collection<JobCategoryCountDocument>(JOB_CATEGORY_COUNTS);

/**
 * Jobs, their output lines and the monthly compute time of each project. Every write is guarded by
 * the event's position (documents) or keyed by it (output lines), so an event applied again changes
 * nothing. Counters are made with `$setOnInsert` first and then incremented under the guard.
 */
export const jobsProjection = defineProjection<JobEvent>('jobs', [JOBS, JOB_OUTPUT, JOB_COMPUTE_TIME, JOB_CATEGORY_COUNTS], {
  async JobRequested(event, store) {
    const d = event.data;
    const countId = categoryCountId(d.projectId, d.organizationId, d.categoryKey);
    await categoryCounts(store).updateOne({ _id: countId }, { $setOnInsert: { count: 0, _position: '' } }, { upsert: true });
    await updateOnce(categoryCounts(store), countId, { $inc: { count: 1 } }, event);
    // Read after the guarded increment: a replay finds the count this event made.
    const count = (await categoryCounts(store).findOne({ _id: countId }))?.count ?? 1;
    await insertOnce(
      jobs(store),
      {
        _id: d.jobId,
        id: d.jobId,
        projectId: d.projectId,
        organizationId: d.organizationId,
        category: d.category,
        categoryKey: d.categoryKey,
        key: d.key,
        state: 'requested',
        created: d.created,
        started: null,
        finished: null,
        finishedSuccessful: null,
        cancelled: false,
        cancelRequested: false,
        reason: null,
        jobNotificationUids: d.jobNotificationUids,
        computeTimeMs: 0,
        createdByUserId: d.createdByUserId,
        parentJobId: d.parentJobId ?? null,
        categoryCount: count,
        workerId: null,
        attempt: 0,
        lastSignOfLife: d.created,
        outputLineCount: 0,
        _position: '',
      },
      event,
    );
  },
  async JobStarted(event, store) {
    const d = event.data;
    // A retry after a lost worker starts again; a late claim event never reopens a finished job.
    const job = await jobs(store).findOne({ _id: d.jobId });
    const state = job?.state === 'finished' ? 'finished' : 'started';
    await updateOnce(jobs(store), d.jobId, { $set: { state, started: d.started, workerId: d.workerId, attempt: d.attempt, lastSignOfLife: d.started } }, event);
  },
  async JobOutputWritten(event, store) {
    const d = event.data;
    const at = positionKey(event.position);
    for (const [i, line] of d.lines.entries()) {
      await insertOnce(output(store), { _id: jobOutputId(d.jobId, at, i), jobId: d.jobId, created: line.created, data: line.data, logLevel: line.logLevel, _position: '' }, event);
    }
    const latest = d.lines.reduce((max, l) => (l.created > max ? l.created : max), '');
    const job = await jobs(store).findOne({ _id: d.jobId });
    const lastSignOfLife = job && job.lastSignOfLife > latest ? job.lastSignOfLife : latest;
    await updateOnce(jobs(store), d.jobId, { $set: { lastSignOfLife }, $inc: { outputLineCount: d.lines.length } }, event);
  },
  async JobHeartbeat(event, store) {
    await updateOnce(jobs(store), event.data.jobId, { $set: { lastSignOfLife: event.data.at } }, event);
  },
  async JobCancelRequested(event, store) {
    await updateOnce(jobs(store), event.data.jobId, { $set: { cancelRequested: true } }, event);
  },
  async JobFinished(event, store) {
    const d = event.data;
    const job = await jobs(store).findOne({ _id: d.jobId });
    await updateOnce(
      jobs(store),
      d.jobId,
      { $set: { state: 'finished', finished: d.finished, finishedSuccessful: d.finishedSuccessful, cancelled: d.cancelled, reason: d.reason, computeTimeMs: d.computeTimeMs } },
      event,
    );
    // The project's compute time for the month the job ended in. A job ends once (the decider
    // refuses a second end); the total's own position guard keeps a replay from counting it twice.
    if (job !== null && job.projectId !== null) {
      const month = monthOf(d.finished);
      const _id = computeTimeId(job.projectId, month);
      await computeTime(store).updateOne({ _id }, { $setOnInsert: { projectId: job.projectId, month, timeUsedMs: 0, _position: '' } }, { upsert: true });
      await updateOnce(computeTime(store), _id, { $inc: { timeUsedMs: d.computeTimeMs } }, event);
    }
  },
  async JobNotificationsUpdated(event, store) {
    await updateOnce(jobs(store), event.data.jobId, { $set: { jobNotificationUids: event.data.jobNotificationUids } }, event);
  },
});

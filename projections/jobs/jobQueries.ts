import { JOB_LOG_LEVELS, type JobLogLevel } from '../../domain/job/jobEvents';
import type { Filter, ReadStore } from '../../stores/readstore/readStore';
import { JOB_COMPUTE_TIME, JOB_OUTPUT, JOBS, computeTimeId, monthOf, type JobComputeTimeDocument, type JobDocument, type JobOutputDocument } from './jobDocument';

/** Whose jobs: a project's, or an organization's (the organization routes list them from here too). */
export type JobScope = { projectId: number } | { organizationId: number };

export interface JobListFilter {
  startDate?: Date;
  endDate?: Date;
  limit?: number;
  offset?: number;
  key?: string;
  category?: string;
  finished?: 'successful' | 'failed' | 'all';
  /** Only jobs no other job requested (leaves a tuner run's trials out). */
  rootOnly?: boolean;
}

/** The levels shown for a `logLevel` filter: that level and the more severe ones. */
export function levelsUpTo(level: JobLogLevel): JobLogLevel[] {
  return JOB_LOG_LEVELS.slice(0, JOB_LOG_LEVELS.indexOf(level) + 1);
}

export class JobQueries {
  constructor(private readonly store: ReadStore) {}

  private get jobs() {
    return this.store.collection<JobDocument>(JOBS);
  }

  byId(jobId: number): Promise<JobDocument | null> {
    return this.jobs.findOne({ _id: jobId });
  }

  /** Jobs not finished, newest first. */
  active(scope: JobScope, options: { rootOnly?: boolean } = {}): Promise<JobDocument[]> {
    return this.jobs.find({ ...scope, state: { $in: ['requested', 'started'] }, ...(options.rootOnly ? { parentJobId: null } : {}) }, { sort: { created: -1, _id: -1 } });
  }

  /**
   * Jobs matching the filter, newest first, paged; `total` is counted before paging. Dates bound
   * the creation time; `finished` picks finished jobs by outcome (absent: every job).
   */
  async list(scope: JobScope, filter: JobListFilter & { onlyFinished?: boolean }): Promise<{ jobs: JobDocument[]; total: number }> {
    const query: Filter = { ...scope };
    const created: Record<string, string> = {};
    if (filter.startDate) created.$gte = filter.startDate.toISOString();
    if (filter.endDate) created.$lte = filter.endDate.toISOString();
    if (Object.keys(created).length > 0) query.created = created;
    if (filter.key !== undefined) query.key = filter.key;
    if (filter.rootOnly) query.parentJobId = null;
    if (filter.category !== undefined) query.category = filter.category;
    if (filter.finished === 'successful') query.finishedSuccessful = true;
    else if (filter.finished === 'failed') query.finishedSuccessful = false;
    else if (filter.finished === 'all' || filter.onlyFinished) query.state = 'finished';
    const [jobs, total] = await Promise.all([
      this.jobs.find(query, { sort: { created: -1, _id: -1 }, skip: filter.offset ?? 0, ...(filter.limit !== undefined ? { limit: filter.limit } : {}) }),
      this.jobs.count(query),
    ]);
    return { jobs, total };
  }

  /** Started jobs not finished, anywhere: what a worker checks for a lost worker. */
  running(): Promise<JobDocument[]> {
    return this.jobs.find({ state: 'started' }, { sort: { _id: 1 } });
  }

  /** Jobs requested and not yet claimed by any worker. */
  waiting(): Promise<JobDocument[]> {
    return this.jobs.find({ state: 'requested' }, { sort: { _id: 1 } });
  }

  /**
   * The last `limit` lines of a job's output (all when absent), oldest first, at `logLevel` or more
   * severe; `totalCount` counts every line the filter matches.
   */
  async output(jobId: number, options: { limit?: number; logLevel?: JobLogLevel } = {}): Promise<{ lines: JobOutputDocument[]; totalCount: number }> {
    const query: Filter = { jobId, ...(options.logLevel ? { logLevel: { $in: levelsUpTo(options.logLevel) } } : {}) };
    const collection = this.store.collection<JobOutputDocument>(JOB_OUTPUT);
    const [latest, totalCount] = await Promise.all([
      collection.find(query, { sort: { _id: -1 }, ...(options.limit !== undefined ? { limit: options.limit } : {}) }),
      collection.count(query),
    ]);
    return { lines: latest.reverse(), totalCount };
  }

  /** A page of a job's output in writing order, for downloads that read it whole without holding it whole. */
  outputPage(jobId: number, afterId: string | undefined, size: number, logLevel?: JobLogLevel): Promise<JobOutputDocument[]> {
    const query: Filter = { jobId, ...(afterId !== undefined ? { _id: { $gt: afterId } } : {}), ...(logLevel ? { logLevel: { $in: levelsUpTo(logLevel) } } : {}) };
    return this.store.collection<JobOutputDocument>(JOB_OUTPUT).find(query, { sort: { _id: 1 }, limit: size });
  }

  /** Compute time of the project's jobs that finished in the calendar month (UTC) of `now`. */
  async computeTimeUsedMs(projectId: number, now: Date): Promise<number> {
    const doc = await this.store.collection<JobComputeTimeDocument>(JOB_COMPUTE_TIME).findOne({ _id: computeTimeId(projectId, monthOf(now.toISOString())) });
    return doc?.timeUsedMs ?? 0;
  }
}

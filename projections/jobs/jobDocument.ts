import type { JobLogLevel } from '../../domain/job/jobEvents';
import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

/** The `jobs` read model: one document per job, of a project or of an organization. */
export interface JobDocument {
  _id: number;
  id: number;
  projectId: number | null;
  organizationId: number | null;
  category: string;
  categoryKey: string;
  key: string;
  /** `requested`, `started` or `finished`: an equality the worker's recovery and the active list query on. */
  state: 'requested' | 'started' | 'finished';
  created: string;
  started: string | null;
  finished: string | null;
  finishedSuccessful: boolean | null;
  cancelled: boolean;
  cancelRequested: boolean;
  /** Why it did not succeed (the Job record's `additionalInfo`). */
  reason: string | null;
  jobNotificationUids: number[];
  computeTimeMs: number;
  createdByUserId: number | null;
  /** The job that requested it as part of its work (a tuner run's trials); null for a root job. */
  parentJobId: number | null;
  /** How many jobs of this category key its project (or organization) had requested, this one included. */
  categoryCount: number;
  workerId: string | null;
  attempt: number;
  /** The latest time its worker was known to be alive (start, output, heartbeat), for recovery. */
  lastSignOfLife: string;
  outputLineCount: number;
  _position: string;
  [key: string]: unknown;
}

/** One output line: a document per line, so `stdout` pages and counts through an index, never an array. */
export interface JobOutputDocument {
  /** `<jobId>:<position of its event>:<index in the batch>`: sorts in the order the lines were written. */
  _id: string;
  jobId: number;
  created: string;
  data: string;
  logLevel: JobLogLevel;
  _position: string;
  [key: string]: unknown;
}

/** Compute time of a project's jobs finished in one calendar month (UTC), summed as they finish. */
export interface JobComputeTimeDocument {
  _id: string;
  projectId: number;
  month: string;
  timeUsedMs: number;
  _position: string;
  [key: string]: unknown;
}

/** A per project (or organization) and category key count, which gives each job its `categoryCount`. */
export interface JobCategoryCountDocument {
  _id: string;
  count: number;
  _position: string;
  [key: string]: unknown;
}

export const JOBS = 'jobs';
export const JOB_OUTPUT = 'job_output';
export const JOB_COMPUTE_TIME = 'job_compute_time';
export const JOB_CATEGORY_COUNTS = 'job_category_counts';

/** A project's or an organization's jobs newest first (lists), and of some states (active jobs); jobs by state for the workers. */
export const JOB_INDEXES: readonly IndexDeclaration[] = [
  { keys: { projectId: 1, created: -1, _id: -1 } },
  { keys: { organizationId: 1, created: -1, _id: -1 } },
  { keys: { projectId: 1, state: 1, created: -1, _id: -1 } },
  { keys: { organizationId: 1, state: 1, created: -1, _id: -1 } },
  { keys: { state: 1, _id: 1 } },
];
/** A job's output lines in order, all of them or those of some log levels. */
export const JOB_OUTPUT_INDEXES: readonly IndexDeclaration[] = [{ keys: { jobId: 1, _id: 1 } }, { keys: { jobId: 1, logLevel: 1, _id: 1 } }];


export const jobOutputId = (jobId: number, positionKey: string, index: number): string => `${jobId}:${positionKey}:${String(index).padStart(4, '0')}`;
/** `YYYY-MM` of an ISO time, in UTC. */
export const monthOf = (iso: string): string => iso.slice(0, 7);
export const computeTimeId = (projectId: number, month: string): string => `${projectId}:${month}`;
export const categoryCountId = (projectId: number | null, organizationId: number | null, categoryKey: string): string =>
  projectId !== null ? `project:${projectId}:${categoryKey}` : `organization:${organizationId ?? 0}:${categoryKey}`;

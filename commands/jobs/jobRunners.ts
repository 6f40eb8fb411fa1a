import type { JobLogLevel } from '../../domain/job/jobEvents';
import type { ThreadPool } from './threadPool';

/** What a runner gets for one run of a job. */
export interface JobRunContext {
  jobId: number;
  projectId: number | null;
  organizationId: number | null;
  /** The parameters recorded with the request (validated when the job was requested). */
  parameters: Record<string, unknown>;
  /** Adds output; lines are batched into JobOutputWritten events. A line without a final newline gets one. */
  log(line: string, level?: JobLogLevel): void;
  /** Aborted when the job is cancelled or ended elsewhere: stop within a second, by returning or throwing. */
  signal: AbortSignal;
  /** Where CPU-bound work goes (pass `signal` along): never on the event loop, which serves HTTP. */
  pool: ThreadPool;
}

/**
 * Runs one kind of job (a `categoryKey`). It returns when the job succeeded and throws when it
 * failed; the error's message becomes the job's reason and its last output line.
 */
export type JobRunner = (context: JobRunContext) => Promise<void>;

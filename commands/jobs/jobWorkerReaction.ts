import type { JobEvent } from '../../domain/job/jobEvents';

/** What the job worker does about one event of a job's stream. */
export type WorkerAction =
  /** Try to claim the job (the claim decides which worker runs it). */
  | { kind: 'claim'; jobId: number }
  /** Stop the run of this job here: asked to cancel, or ended by someone else (forced cancel, recovery). */
  | { kind: 'stop'; jobId: number; reason: string; endedElsewhere: boolean };

export interface WorkerFacts {
  hasRunner(categoryKey: string): boolean;
  runsHere(jobId: number): boolean;
}

/**
 * The worker saga's decision, pure: an event in, actions out. The effects (appending the claim,
 * running the runner, aborting it) are the worker's.
 */
export function workerReaction(event: JobEvent, facts: WorkerFacts): WorkerAction[] {
  switch (event.type) {
    case 'JobRequested':
      return facts.hasRunner(event.data.categoryKey) ? [{ kind: 'claim', jobId: event.data.jobId }] : [];
    case 'JobCancelRequested':
      return facts.runsHere(event.data.jobId) ? [{ kind: 'stop', jobId: event.data.jobId, reason: 'Cancelled', endedElsewhere: event.data.force }] : [];
    case 'JobFinished':
      return facts.runsHere(event.data.jobId) ? [{ kind: 'stop', jobId: event.data.jobId, reason: event.data.reason ?? 'Ended', endedElsewhere: true }] : [];
    default:
      return [];
  }
}

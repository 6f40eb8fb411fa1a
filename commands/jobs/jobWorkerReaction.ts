import type { JobEvent } from '../../domain/job/jobEvents';
import type { ProjectDeleted } from '../../domain/project/projectEvents';

/** The reason a job of a deleted project ends with. */
export const PROJECT_DELETED_REASON = 'The project was deleted: stopped';

/** What the job worker does about one event of a job's stream. */
export type WorkerAction =
  /** Try to claim the job (the claim decides which worker runs it). */
  | { kind: 'claim'; jobId: number }
  /** Stop the run of this job here: asked to cancel, its project deleted, or ended by someone else (forced cancel, recovery). */
  | { kind: 'stop'; jobId: number; reason: string; endedElsewhere: boolean };

export interface WorkerFacts {
  hasRunner(categoryKey: string): boolean;
  runsHere(jobId: number): boolean;
  /** The jobs of the project running here. */
  runningFor(projectId: number): number[];
}

/**
 * The worker saga's decision, pure: an event in, actions out. The effects (appending the claim,
 * running the runner, aborting it) are the worker's.
 */
export function workerReaction(event: JobEvent | ProjectDeleted, facts: WorkerFacts): WorkerAction[] {
  switch (event.type) {
    case 'JobRequested':
      return facts.hasRunner(event.data.categoryKey) ? [{ kind: 'claim', jobId: event.data.jobId }] : [];
    case 'JobCancelRequested':
      return facts.runsHere(event.data.jobId) ? [{ kind: 'stop', jobId: event.data.jobId, reason: 'Cancelled', endedElsewhere: event.data.force }] : [];
    case 'JobFinished':
      return facts.runsHere(event.data.jobId) ? [{ kind: 'stop', jobId: event.data.jobId, reason: event.data.reason ?? 'Ended', endedElsewhere: true }] : [];
    case 'ProjectDeleted':
      // Nothing may keep working for a deleted project; the run ends failed with the reason (runners know nothing of projects).
      return facts.runningFor(event.data.projectId).map((jobId) => ({ kind: 'stop' as const, jobId, reason: PROJECT_DELETED_REASON, endedElsewhere: false }));
    default:
      return [];
  }
}

// What follows a coordinator job's end for its run, pure: a run its coordinator did not end (cancelled,
// failed, stopped, or failed by recovery after its worker was lost twice) ends with the job, and its
// children still running are cancelled, so no trial is left running.
import type { JobFinished } from '../job/jobEvents';
import type { TunerRunProgress } from './tunerRunProgress';

export interface RunEndAfterCoordinator {
  /** Child jobs to cancel (at once: their workers may be gone too). */
  cancelJobIds: number[];
  status: 'completed' | 'failed' | 'cancelled';
  error: string | null;
}

export function runEndAfterCoordinator(progress: TunerRunProgress, finished: Pick<JobFinished['data'], 'finishedSuccessful' | 'cancelled' | 'reason'>): RunEndAfterCoordinator | null {
  if (progress.started === null || progress.ended) return null;
  const cancelJobIds = [...progress.trials.values()].filter((t) => t.status === 'running' && t.jobId !== null).map((t) => t.jobId!);
  if (finished.cancelled) return { cancelJobIds, status: 'cancelled', error: null };
  const error = finished.finishedSuccessful ? 'The coordinator job ended without ending the run' : (finished.reason ?? 'The coordinator job failed');
  return { cancelJobIds, status: 'failed', error };
}

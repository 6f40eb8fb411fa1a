// What a coordinator knows of its run: the run stream folded into the trials with their impulses,
// rounds, jobs and results. Pure, so the coordinator's next step is decided from the log alone and a
// restarted coordinator decides what the first one would have.
import type { TrialImpulse } from './searchSpace';
import type { TrialRound, TunerRunEvent, TunerRunStarted } from './tunerRunEvents';

export interface TrialProgress {
  trial: number;
  impulse: TrialImpulse;
  round: TrialRound | null;
  /** The child job running it; null while only planned. */
  jobId: number | null;
  status: 'pending' | 'running' | 'completed' | 'failed';
  accuracy: number | null;
  overBudget: boolean;
}

export interface TunerRunProgress {
  started: TunerRunStarted['data'] | null;
  /** By trial number. */
  trials: ReadonlyMap<number, TrialProgress>;
  ended: boolean;
}

export const emptyProgress = (): TunerRunProgress => ({ started: null, trials: new Map(), ended: false });

export function evolveProgress(progress: TunerRunProgress, event: TunerRunEvent): TunerRunProgress {
  const with_ = (trial: number, change: (t: TrialProgress | undefined) => TrialProgress | undefined) => {
    const next = change(progress.trials.get(trial));
    return next ? { ...progress, trials: new Map([...progress.trials, [trial, next]]) } : progress;
  };
  switch (event.type) {
    case 'TunerRunStarted':
      return { ...progress, started: event.data };
    case 'TunerTrialPlanned': {
      const d = event.data;
      return with_(d.trial, (t) => t ?? { trial: d.trial, impulse: d.impulse, round: d.round, jobId: null, status: 'pending', accuracy: null, overBudget: false });
    }
    case 'TunerTrialStarted':
      return with_(event.data.trial, (t) => t && { ...t, jobId: event.data.jobId, status: t.status === 'pending' ? 'running' : t.status });
    case 'TunerTrialFinished': {
      const d = event.data;
      return with_(d.trial, (t) => t && { ...t, status: d.status, accuracy: d.status === 'completed' ? d.accuracy : null, overBudget: d.overBudget });
    }
    case 'TunerRunRenamed':
    case 'TunerTrialEpoch':
    case 'TunerTrialImpulseAdded':
      return progress;
    case 'TunerRunEnded':
      return { ...progress, ended: true };
  }
}

export const foldProgress = (events: readonly TunerRunEvent[]): TunerRunProgress => events.reduce(evolveProgress, emptyProgress());

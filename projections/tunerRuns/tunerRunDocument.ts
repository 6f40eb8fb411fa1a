import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';
import type { OptimizeSettings } from '../../domain/optimize/optimizeConfig';
import type { TrialImpulse } from '../../domain/optimize/searchSpace';
import type { TunerSpaceImpulse } from '../../domain/optimize/tunerSpace';
import type { TrialEpoch, TrialEstimates, TrialRound } from '../../domain/optimize/tunerRunEvents';

/** A tuner run (the SDK's TunerRun, and what OptimizeStateResponse needs of it). */
export interface TunerRunDocument {
  _id: string;
  projectId: number;
  coordinatorJobId: number;
  index: number;
  name: string;
  config: OptimizeSettings;
  space: TunerSpaceImpulse[];
  seed: number;
  extendedFromJobId: number | null;
  created: string;
  /** running until the run's end. */
  jobStatus: 'running' | 'completed' | 'failed' | 'cancelled';
  error: string | null;
  _position: string;
  [key: string]: unknown;
}

/**
 * A trial's impulse as stored: the DSP config's keys are parameter names a client listed, kept out of
 * field names (MongoDB refuses some) as a list.
 */
export type StoredTrialImpulse = Omit<TrialImpulse, 'dsp'> & { dsp: { type: string; config: { name: string; value: string }[] } };

export interface TunerTrialDocument {
  _id: string;
  projectId: number;
  coordinatorJobId: number;
  trial: number;
  /** Null while only its start or end was seen (delivery order within a run is the log's, so only in replays of a broken log). */
  impulse: StoredTrialImpulse | null;
  round: TrialRound | null;
  status: 'pending' | 'running' | 'completed' | 'failed';
  jobId: number | null;
  attempt: number;
  accuracy: number | null;
  loss: number | null;
  estimates: TrialEstimates | null;
  overBudget: boolean;
  error: string | null;
  /** The impulse last made from this trial (setTunerPrimaryJob); absent until then. */
  impulseAddedToProject?: { impulseId: number; jobId: number };
  /** The current attempt's epochs, in order (emptied when the trial is started again). */
  epochs: TrialEpoch[];
  /** The trained model's blob; null until the trial completes (and for events written before it was recorded). */
  modelSha256: string | null;
  _position: string;
  [key: string]: unknown;
}

export const TUNER_RUNS = 'tunerRuns';
/** A project's runs in order (TunerRunQueries.forProject); a run's trials in order (TunerRunQueries.trials). */
export const TUNER_RUN_INDEXES: readonly IndexDeclaration[] = [{ keys: { projectId: 1, index: 1 } }];
export const TUNER_TRIAL_INDEXES: readonly IndexDeclaration[] = [{ keys: { projectId: 1, coordinatorJobId: 1, trial: 1 } }];
export const TUNER_TRIALS = 'tunerTrials';
export const tunerRunId = (projectId: number, coordinatorJobId: number): string => `${projectId}:${coordinatorJobId}`;
export const tunerTrialId = (projectId: number, coordinatorJobId: number, trial: number): string => `${projectId}:${coordinatorJobId}:${trial}`;

export const storedTrialImpulse = (impulse: TrialImpulse): StoredTrialImpulse => ({ ...impulse, dsp: { type: impulse.dsp.type, config: Object.entries(impulse.dsp.config).map(([name, value]) => ({ name, value })) } });
export const trialImpulseOf = (stored: StoredTrialImpulse): TrialImpulse => ({ ...stored, dsp: { type: stored.dsp.type, config: Object.fromEntries(stored.dsp.config.map((p) => [p.name, p.value])) } });

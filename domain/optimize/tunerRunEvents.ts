import type { DomainEvent } from '../shared/decider';
import type { OptimizeSettings } from './optimizeConfig';
import type { TrialImpulse } from './searchSpace';
import type { TunerSpaceImpulse } from './tunerSpace';

// One stream per tuner run (its coordinator job): the config and space it searches and its seed, each
// trial planned (its impulse, and its hyperband round), started as a child job (a second attempt
// when a worker was lost), its training's epochs, finished with its metrics, estimates for the target
// device and model blob; renames;
// the run's end. Trial ids are the run's trial indexes, so a coordinator run again plans nothing twice.

export const tunerRunStream = (projectId: number, coordinatorJobId: number): string => `tuner-run-${projectId}-${coordinatorJobId}`;

type RunData<T> = { projectId: number; coordinatorJobId: number } & T;

export type TunerRunStarted = DomainEvent<
  'TunerRunStarted',
  RunData<{ index: number; name: string; config: OptimizeSettings; space: TunerSpaceImpulse[]; seed: number; extendedFromJobId: number | null; started: string }>
>;

/** Which hyperband round a trial belongs to (null for random search). */
export interface TrialRound {
  bracket: number;
  round: number;
  cycles: number;
}

export type TunerTrialPlanned = DomainEvent<'TunerTrialPlanned', RunData<{ trial: number; impulse: TrialImpulse; round: TrialRound | null; planned: string }>>;
export type TunerTrialStarted = DomainEvent<'TunerTrialStarted', RunData<{ trial: number; jobId: number; attempt: number; started: string }>>;

/** Estimates for the run's target device. */
export interface TrialEstimates {
  latencyMs: number;
  ramBytes: number;
  romBytes: number;
}

/** One epoch of a trial's training (its job's attempt): the training and validation loss and accuracy (accuracy null for a regression). */
export type TrialEpoch = {
  epoch: number;
  loss: number | null;
  accuracy: number | null;
  valLoss: number | null;
  valAccuracy: number | null;
};

export type TunerTrialEpoch = DomainEvent<'TunerTrialEpoch', RunData<{ trial: number } & TrialEpoch>>;

/** `modelSha256`: the trained model's blob (absent in events written before it was recorded: read as null). */
export type TunerTrialFinished = DomainEvent<
  'TunerTrialFinished',
  RunData<{ trial: number; status: 'completed' | 'failed'; accuracy: number | null; loss: number | null; estimates: TrialEstimates | null; overBudget: boolean; error: string | null; modelSha256?: string | null; finished: string }>
>;
/** A completed trial's impulse was added to the project as impulse `impulseId`, by job `jobId` (setTunerPrimaryJob). */
export type TunerTrialImpulseAdded = DomainEvent<'TunerTrialImpulseAdded', RunData<{ trial: number; impulseId: number; jobId: number; added: string }>>;
export type TunerRunRenamed = DomainEvent<'TunerRunRenamed', RunData<{ name: string; renamed: string }>>;
export type TunerRunEnded = DomainEvent<'TunerRunEnded', RunData<{ status: 'completed' | 'failed' | 'cancelled'; error: string | null; ended: string }>>;

export type TunerRunEvent = TunerRunStarted | TunerTrialPlanned | TunerTrialStarted | TunerTrialEpoch | TunerTrialFinished | TunerTrialImpulseAdded | TunerRunRenamed | TunerRunEnded;

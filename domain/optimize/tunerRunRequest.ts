// The checks a tuner run's request passes before any job exists, pure: a device with RAM, training
// data of two classes at least, an impulse the tuner can vary, an extended run of this project that
// has ended, and a space holding at least one trial the project can run now (a saved space was checked
// against the impulse when saved; the impulse may have changed since). What it answers is what the
// coordinator runs: the space searched (the config's, the extended run's, or the space around the
// impulse), so a run searches what was checked.
import { ValidationError } from '../shared/errors';
import { candidateTrials } from './coordinatorPlan';
import { impulseSpace, type ImpulseForSpace } from './impulseSpace';
import type { OptimizeSettings } from './optimizeConfig';
import type { TunerSpaceImpulse } from './tunerSpace';

/** A run and the runs it extends, read from their streams. */
export interface RunLineage {
  seed: number;
  space: TunerSpaceImpulse[];
  /** trialKey of every impulse the lineage planned. */
  tried: ReadonlySet<string>;
  /** The extended run itself has ended. */
  ended: boolean;
}

export interface TunerRunRequestFacts {
  config: OptimizeSettings;
  /** Labels with at least one training sample. */
  trainingLabels: readonly string[];
  /** The project's selected impulse as the tuner sees it; null when it has none. */
  impulse: { inputType: string; frequencyHz?: number; learnTypes: readonly string[]; forSpace: ImpulseForSpace | null } | null;
  /** The run named by extendedFromJobId (null when it is not a run of this project); absent when none was named. */
  extended?: { jobId: number; lineage: RunLineage | null };
}

/** What the coordinator searches. */
export interface TunerRunSearch {
  space: TunerSpaceImpulse[];
  frequencyHz: number | null;
  learnTypes: string[];
}

export function checkTunerRunRequest(facts: TunerRunRequestFacts): TunerRunSearch {
  const { config, impulse, extended } = facts;
  for (const field of ['ram', 'rom'] as const) {
    if (!(config.targetDevice[field] > 0)) {
      throw new ValidationError(`The tuner config's target device (${config.targetDevice.name}) has no ${field.toUpperCase()}: set targetDevice.${field} in bytes (optimize/config)`, 'DEVICE_MEMORY_REQUIRED');
    }
  }
  if (facts.trainingLabels.length < 2) {
    throw new ValidationError(`The project has training data of ${facts.trainingLabels.length} class${facts.trainingLabels.length === 1 ? '' : 'es'}: the tuner needs at least 2 classes in training`, 'NO_TRAINING_DATA');
  }
  if (!impulse) throw new ValidationError('The project has no impulse: create one (the tuner varies it)', 'NO_IMPULSE');
  if (impulse.inputType !== 'time-series') throw new ValidationError(`The tuner varies time-series impulses; this project's impulse reads ${impulse.inputType}`, 'NO_VALID_TRIAL');
  let space: TunerSpaceImpulse[];
  let seed = 0;
  let tried: ReadonlySet<string> = new Set();
  if (extended) {
    const lineage = extended.lineage;
    if (!lineage) throw new ValidationError(`extendedFromJobId: ${extended.jobId} is not a tuner run of this project`, 'EXTENDED_RUN_NOT_FOUND');
    if (!lineage.ended) throw new ValidationError(`extendedFromJobId: tuner run ${extended.jobId} is still running; extend it once it has ended`, 'EXTENDED_RUN_RUNNING');
    ({ space, seed, tried } = lineage);
  } else if (config.space.length > 0) {
    space = config.space;
  } else {
    if (!impulse.forSpace) throw new ValidationError('The tuner config has no space, and the impulse has no window, DSP block and keras block to search around: save a space (optimize/config)', 'NO_VALID_TRIAL');
    space = [impulseSpace(impulse.forSpace, config.trainingCycles)];
  }
  const learnTypes = [...impulse.learnTypes];
  if (candidateTrials(space, seed, 1, impulse.frequencyHz, learnTypes, tried).length === 0) {
    const why = extended ? `every trial of run ${extended.jobId}'s space was tried already` : `no combination of its choices can run on this project's impulse (${impulse.frequencyHz ?? '?'} Hz, learn blocks: ${learnTypes.join(', ') || 'none'})`;
    throw new ValidationError(`The search space holds no valid trial: ${why}`, 'NO_VALID_TRIAL');
  }
  return { space, frequencyHz: impulse.frequencyHz ?? null, learnTypes };
}

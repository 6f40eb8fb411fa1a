// The runners production's jobs role gets: one for each kind of job the API requests. A kind missing
// here would stay requested for good on a production service (no worker claims it).
import { expect, it } from 'vitest';
import { MODEL_TESTING } from '../../commands/classify/modelTesting';
import { BUILD_ONDEVICE_MODEL } from '../../commands/deployment/buildDeployment';
import { TUNER_TRIAL_IMPULSE_JOB } from '../../commands/optimize/trialImpulseJob';
import { TUNER_COORDINATOR } from '../../commands/optimize/tunerCoordinator';
import { TUNER_TRIAL } from '../../commands/optimize/tunerTrial';
import { RESTORE_JOB } from '../../commands/versions/restoreJob';
import { TRAIN_ANOMALY } from '../../commands/training/anomalyTraining';
import { VERSION_JOB } from '../../commands/versions/versionJob';
import type { Stores } from '../../service/composition';
import { productionJobRunners } from '../../service/roles/productionJobRunners';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';

it('runs feature generation, anomaly and keras training, on-device builds, model testing, versions and restores, tuner runs, their trials and trials added to a project, and no test job', () => {
  // Making the runners reads nothing yet: stores that are never called do.
  const stores = { events: {}, blobs: {}, readStore: new MemoryReadStore() } as unknown as Stores;
  const runners = productionJobRunners(stores);
  expect([...runners.keys()].sort()).toEqual(['generate-features', TRAIN_ANOMALY, 'train-keras', BUILD_ONDEVICE_MODEL, MODEL_TESTING, VERSION_JOB, RESTORE_JOB, TUNER_COORDINATOR, TUNER_TRIAL, TUNER_TRIAL_IMPULSE_JOB].sort());
  for (const runner of runners.values()) expect(runner).toBeTypeOf('function');
});

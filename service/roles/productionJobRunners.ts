// The job runners of a production service, by category key: feature generation, anomaly and keras
// training, on-device model builds, model testing, versions, the tuner's coordinator and its trials. The service gives them to the jobs role
// (service/roles/jobsRole.ts); a test entry point may give more (test/support/testJobRunners.ts).
import { MODEL_TESTING, modelTestingRunner } from '../../commands/classify/modelTesting';
import { BUILD_ONDEVICE_MODEL } from '../../commands/deployment/buildDeployment';
import { deploymentBuildRunnerFor } from '../../commands/deployment/deploymentRunner';
import { generateFeaturesRunner } from '../../commands/dsp/generateFeatures';
import { IdAllocator } from '../../commands/idAllocator';
import { TUNER_COORDINATOR, tunerCoordinatorRunner } from '../../commands/optimize/tunerCoordinator';
import type { JobRunner } from '../../commands/jobs/jobRunners';
import { anomalyTrainingRunner, TRAIN_ANOMALY } from '../../commands/training/anomalyTraining';
import { RESTORE_JOB, restoreJobRunner } from '../../commands/versions/restoreJob';
import { VERSION_JOB, versionJobRunner } from '../../commands/versions/versionJob';
import { TUNER_TRIAL_IMPULSE_JOB, trialImpulseJobRunner } from '../../commands/optimize/trialImpulseJob';
import { allProjections } from '../../projections';
import { historyProjection } from '../../projections/history/historyProjection';
import { kerasTrainingRunner } from '../../commands/training/kerasTraining';
import { TUNER_TRIAL, tunerTrialRunner } from '../../commands/optimize/tunerTrial';
import { AnomalyModelQueries } from '../../projections/anomalyModels/anomalyModelQueries';
import { ApiKeyQueries } from '../../projections/apiKeys/apiKeyQueries';
import { DspFeaturesQueries } from '../../projections/dspFeatures/dspFeaturesQueries';
import { ImpulseQueries } from '../../projections/impulses/impulseQueries';
import { KerasModelQueries } from '../../projections/kerasModels/kerasModelQueries';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import { SampleQueries } from '../../projections/samples/sampleQueries';
import { TunerRunQueries } from '../../projections/tunerRuns/tunerRunQueries';
import type { Stores } from '../composition';

/** Makes the runners a jobs role gets, on the service's stores. */
export type JobRunnersFactory = (stores: Stores) => Map<string, JobRunner>;

export const productionJobRunners: JobRunnersFactory = ({ events, blobs, readStore }) => {
  const impulses = new ImpulseQueries(readStore);
  const samples = new SampleQueries(readStore);
  const dspFeatures = new DspFeaturesQueries(readStore);
  const kerasModels = new KerasModelQueries(readStore);
  const anomalyModels = new AnomalyModelQueries(readStore);
  const projects = new ProjectQueries(readStore);
  // A tuner searches around the project's chosen default impulse while it exists, else its first (as the API's selectedImpulseId).
  const selectedImpulse = async (projectId: number) => {
    const chosen = (await projects.byId(projectId))?.settings?.defaultImpulseId;
    return (chosen === undefined || chosen === null ? null : await impulses.byId(projectId, chosen)) ?? impulses.byId(projectId);
  };
  const modelTesting = modelTestingRunner({ events, blobs, projects, impulses, samples, dspFeatures, kerasModels, anomalyModels });
  const versionDeps = { events, readStore, history: historyProjection, projections: allProjections.filter((p) => p !== historyProjection) };
  return new Map<string, JobRunner>([
    ['generate-features', generateFeaturesRunner({ events, blobs, impulses, samples })],
    [TRAIN_ANOMALY, anomalyTrainingRunner({ events, blobs, impulses, dspFeatures })],
    ['train-keras', kerasTrainingRunner({ events, blobs, impulses, dspFeatures })],
    [BUILD_ONDEVICE_MODEL, deploymentBuildRunnerFor(events, blobs, readStore)],
    [MODEL_TESTING, modelTesting],
    [TUNER_COORDINATOR, tunerCoordinatorRunner({ events, ids: new IdAllocator(events), projects })],
    [TUNER_TRIAL, tunerTrialRunner({ events, blobs, impulses: { selected: selectedImpulse }, samples })],
    [TUNER_TRIAL_IMPULSE_JOB, trialImpulseJobRunner({ events, impulses, tunerRuns: new TunerRunQueries(readStore) })],
    [VERSION_JOB, versionJobRunner({ ...versionDeps, modelTesting })],
    [RESTORE_JOB, restoreJobRunner({ ...versionDeps, ids: new IdAllocator(events), liveSamples: samples, projects, apiKeys: new ApiKeyQueries(readStore) })],
  ]);
};

import { anomalyModelsProjection } from './anomalyModels/anomalyModelsProjection';
import { apiKeysProjection } from './apiKeys/apiKeysProjection';
import { deploymentsProjection } from './deployments/deploymentsProjection';
import { devicesProjection } from './devices/devicesProjection';
import { dspFeaturesProjection } from './dspFeatures/dspFeaturesProjection';
import { emailsProjection } from './emails/emailsProjection';
import { historyProjection } from './history/historyProjection';
import { impulsesProjection } from './impulses/impulsesProjection';
import { jobsProjection } from './jobs/jobsProjection';
import { kerasModelsProjection } from './kerasModels/kerasModelsProjection';
import { modelTestingProjection } from './modelTesting/modelTestingProjection';
import { optimizeConfigsProjection } from './optimizeConfigs/optimizeConfigsProjection';
import { tunerRunsProjection } from './tunerRuns/tunerRunsProjection';
import { oauthClientsProjection } from './oauthClients/oauthClientsProjection';
import { oauthGrantsProjection } from './oauthGrants/oauthGrantsProjection';
import { organizationsProjection } from './organizations/organizationsProjection';
import type { Projection } from './projection';
import { samplesProjection } from './samples/samplesProjection';
import { projectsProjection } from './projects/projectsProjection';
import { usersProjection } from './users/usersProjection';
import { versionsProjection } from './versions/versionsProjection';
import { whitelabelsProjection } from './whitelabels/whitelabelsProjection';

/** Every read model the API serves from. */
export const allProjections: readonly Projection[] = [usersProjection, projectsProjection, apiKeysProjection, emailsProjection, organizationsProjection, samplesProjection, devicesProjection, impulsesProjection, jobsProjection, dspFeaturesProjection, anomalyModelsProjection, kerasModelsProjection, deploymentsProjection, modelTestingProjection, optimizeConfigsProjection, tunerRunsProjection, whitelabelsProjection, versionsProjection, oauthClientsProjection, oauthGrantsProjection, historyProjection];

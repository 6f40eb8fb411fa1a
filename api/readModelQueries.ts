// The read models the management API serves from, as queries over one read store: built alike by the
// API role and by the route specifications (test/support/routeSpec.ts).
import { allProjections } from '../projections';
import { AnomalyModelQueries } from '../projections/anomalyModels/anomalyModelQueries';
import { ApiKeyQueries } from '../projections/apiKeys/apiKeyQueries';
import { DeploymentQueries } from '../projections/deployments/deploymentQueries';
import { DeviceQueries } from '../projections/devices/deviceQueries';
import { DspFeaturesQueries } from '../projections/dspFeatures/dspFeaturesQueries';
import { EmailQueries } from '../projections/emails/emailQueries';
import { historyProjection } from '../projections/history/historyProjection';
import { HistoryQueries } from '../projections/history/historyQueries';
import { readModelsAsOf } from '../projections/history/pointInTime';
import { ImpulseQueries } from '../projections/impulses/impulseQueries';
import { JobQueries } from '../projections/jobs/jobQueries';
import { KerasModelQueries } from '../projections/kerasModels/kerasModelQueries';
import { ModelTestingQueries } from '../projections/modelTesting/modelTestingQueries';
import { OptimizeConfigQueries } from '../projections/optimizeConfigs/optimizeConfigQueries';
import { TunerRunQueries } from '../projections/tunerRuns/tunerRunQueries';
import { OAuthClientQueries } from '../projections/oauthClients/oauthClientQueries';
import { OrganizationQueries } from '../projections/organizations/organizationQueries';
import { ProjectQueries } from '../projections/projects/projectQueries';
import { SampleQueries } from '../projections/samples/sampleQueries';
import { UserQueries } from '../projections/users/userQueries';
import { VersionQueries } from '../projections/versions/versionQueries';
import { WhitelabelQueries } from '../projections/whitelabels/whitelabelQueries';
import type { SealingEventStore } from '../stores/keystore/sealingEventStore';
import type { ReadStore } from '../stores/readstore/readStore';
import type { ApiDeps } from './apiDeps';

export type ReadModelQueries = Pick<
  ApiDeps,
  | 'users' | 'projects' | 'apiKeys' | 'organizations' | 'whitelabels' | 'emails' | 'devices' | 'impulses' | 'samples' | 'jobs'
  | 'dspFeatures' | 'anomalyModels' | 'kerasModels' | 'deployments' | 'modelTesting' | 'versions' | 'optimizeConfigs' | 'tunerRuns' | 'oauthClients' | 'history' | 'changeMark' | 'pointInTime'
>;

export function readModelQueries(events: SealingEventStore, readStore: ReadStore): ReadModelQueries {
  return {
    users: new UserQueries(readStore),
    projects: new ProjectQueries(readStore),
    apiKeys: new ApiKeyQueries(readStore),
    organizations: new OrganizationQueries(readStore),
    whitelabels: new WhitelabelQueries(readStore),
    emails: new EmailQueries(readStore),
    devices: new DeviceQueries(readStore),
    impulses: new ImpulseQueries(readStore),
    samples: new SampleQueries(readStore),
    jobs: new JobQueries(readStore),
    dspFeatures: new DspFeaturesQueries(readStore),
    anomalyModels: new AnomalyModelQueries(readStore),
    kerasModels: new KerasModelQueries(readStore),
    deployments: new DeploymentQueries(readStore),
    modelTesting: new ModelTestingQueries(readStore),
    versions: new VersionQueries(readStore),
    optimizeConfigs: new OptimizeConfigQueries(readStore),
    tunerRuns: new TunerRunQueries(readStore),
    oauthClients: new OAuthClientQueries(readStore),
    history: new HistoryQueries(readStore),
    changeMark: readStore.changeMark?.bind(readStore),
    // The point-in-time views replay the project's events through every projection but the history itself.
    pointInTime: (projectId, asOf) => readModelsAsOf(events, readStore, allProjections.filter((p) => p !== historyProjection), projectId, asOf),
  };
}

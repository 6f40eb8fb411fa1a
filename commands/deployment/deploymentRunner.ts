// The build-ondevice-model runner as the service registers it: the read models, the runtime spec
// builder (commands/classify/impulseRuntimeSpec.ts) and the artifact builders over the runtime bundles.
import { AnomalyModelQueries } from '../../projections/anomalyModels/anomalyModelQueries';
import { DspFeaturesQueries } from '../../projections/dspFeatures/dspFeaturesQueries';
import { ImpulseQueries } from '../../projections/impulses/impulseQueries';
import { KerasModelQueries } from '../../projections/kerasModels/kerasModelQueries';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import { SampleQueries } from '../../projections/samples/sampleQueries';
import type { BlobStore } from '../../stores/blobstore/blobStore';
import type { EventStore } from '../../stores/eventstore/eventStore';
import type { ReadStore } from '../../stores/readstore/readStore';
import { buildImpulseRuntimeSpec } from '../classify/impulseRuntimeSpec';
import type { JobRunner } from '../jobs/jobRunners';
import { artifactBuilders } from './artifactBuilders';
import { deploymentBuildRunner } from './buildDeployment';
import { runtimeBundle } from './runtimeBundles';

export function deploymentBuildRunnerFor(events: EventStore, blobs: BlobStore, readStore: ReadStore): JobRunner {
  const reads = {
    blobs,
    projects: new ProjectQueries(readStore),
    impulses: new ImpulseQueries(readStore),
    samples: new SampleQueries(readStore),
    dspFeatures: new DspFeaturesQueries(readStore),
    kerasModels: new KerasModelQueries(readStore),
    anomalyModels: new AnomalyModelQueries(readStore),
  };
  return deploymentBuildRunner({
    ...reads,
    events,
    runtimeSpec: async (projectId, impulseId) => (await buildImpulseRuntimeSpec(reads, projectId, impulseId)).spec,
    builders: artifactBuilders(runtimeBundle),
  });
}

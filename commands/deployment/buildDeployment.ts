// The build-ondevice-model job: the impulse's runtime spec (its blocks, configs and trained models)
// made into the requested artifact, stored as a blob and recorded by a DeploymentBuilt event naming
// the blob, the models it embeds and the version the request answered. The models are checked again
// when the job runs: one deleted or never trained since the request fails the job, naming it.
import { deploymentDecider } from '../../domain/deployment/deploymentDecider';
import { deploymentStream } from '../../domain/deployment/deploymentEvents';
import { artifactFileName, resolveBuild } from '../../domain/deployment/deploymentBuilds';
import type { BlobStore } from '../../stores/blobstore/blobStore';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { systemContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { JobRunContext, JobRunner } from '../jobs/jobRunners';
import { deployableModels, type DeployableModelsDeps } from './deployableModels';

export const BUILD_ONDEVICE_MODEL = 'build-ondevice-model';

/** What the artifact's hello tells a device about its project. */
export interface DeployedProject {
  id: number;
  name: string;
  owner: string;
  deployVersion: number;
}

/** Makes one type of artifact from an impulse's runtime spec. */
export type ArtifactBuilder = (input: { spec: unknown; project: DeployedProject; engine: string }) => Promise<Uint8Array>;

export interface DeploymentBuildDeps extends DeployableModelsDeps {
  events: EventStore;
  blobs: BlobStore;
  projects: { byId(projectId: number): Promise<{ name: string } | null> };
  /** The impulse as the runtime runs it (JSON: blocks, configs, models), for the builders to embed. */
  runtimeSpec(projectId: number, impulseId: number): Promise<unknown>;
  builders: Readonly<Record<string, ArtifactBuilder>>;
}

export interface BuildJobParameters {
  type: string;
  engine: string;
  impulseId: number | null;
  version: number;
}

export function deploymentBuildRunner(deps: DeploymentBuildDeps): JobRunner {
  return async (job: JobRunContext) => {
    const projectId = job.projectId;
    if (projectId === null) throw new Error('A build-ondevice-model job belongs to a project');
    const params = job.parameters as unknown as BuildJobParameters;
    const { type, engine, suffix } = resolveBuild(String(params.type), String(params.engine));
    const builder = deps.builders[type];
    if (!builder) throw new Error(`No builder for deployment type "${type}" in this process`);
    const project = await deps.projects.byId(projectId);
    if (!project) throw new Error('The project was deleted');
    const { impulse, models } = await deployableModels(deps, projectId, params.impulseId ?? undefined);
    job.log(`Building ${type} (engine ${engine}) of impulse ${impulse.id} from ${models.map((m) => `${m.type} block ${m.learnId} (model ${m.model.slice(0, 12)})`).join(', ')}`);
    const spec = await deps.runtimeSpec(projectId, impulse.id);
    job.signal.throwIfAborted();
    const bytes = await builder({ spec, project: { id: projectId, name: project.name, owner: '', deployVersion: params.version }, engine });
    job.signal.throwIfAborted();
    const blob = await deps.blobs.put(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    const fileName = artifactFileName(project.name, params.version, suffix);
    const now = new Date();
    await handleCommand(
      deps.events,
      deploymentStream(projectId),
      deploymentDecider,
      { type: 'RecordDeployment', data: { projectId, impulseId: impulse.id, jobId: job.jobId, version: params.version, type, engine, artifact: blob.sha256, size: bytes.byteLength, fileName, models, built: now.toISOString() } },
      systemContext(BUILD_ONDEVICE_MODEL, now),
    );
    job.log(`Built ${fileName}: ${bytes.byteLength} bytes, ${blob.sha256}`);
  };
}

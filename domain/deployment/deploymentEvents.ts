import type { DomainEvent } from '../shared/decider';

// The deployments of a project, one stream per project: each build a job made, naming the artifact
// blob by its content hash and the trained models it was built from, so a build can be traced to
// its data and told apart from a newer one. The latest build of a type is the one downloaded.

export const deploymentStream = (projectId: number): string => `deployment-${projectId}`;

/** A learn block's model a build embeds (the model blob's SHA-256, as its training event names it). */
export interface DeployedModel {
  learnId: number;
  type: 'keras' | 'anomaly';
  model: string;
}

export type DeploymentBuilt = DomainEvent<
  'DeploymentBuilt',
  {
    projectId: number;
    impulseId: number;
    jobId: number;
    /** The deployment version the request answered (BuildOnDeviceModelResponse.deploymentVersion). */
    version: number;
    /** The target's format (`runner-linux-x86_64`, `wasm`). */
    type: string;
    engine: string;
    /** SHA-256 of the artifact blob, its size and the name it is downloaded as. */
    artifact: string;
    size: number;
    fileName: string;
    models: DeployedModel[];
    built: string;
  }
>;

export type DeploymentEvent = DeploymentBuilt;

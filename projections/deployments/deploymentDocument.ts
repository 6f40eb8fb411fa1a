import type { DeploymentBuilt } from '../../domain/deployment/deploymentEvents';

/** The `deployments` read model: a project's latest build of each deployment type. */
export interface DeploymentDocument {
  /** `${projectId}:${type}`. */
  _id: string;
  projectId: number;
  type: string;
  build: DeploymentBuilt['data'];
  _position: string;
  [key: string]: unknown;
}

export const DEPLOYMENTS = 'deployments';
export const deploymentId = (projectId: number, type: string): string => `${projectId}:${type}`;

import type { ReadStore } from '../../stores/readstore/readStore';
import { DEPLOYMENTS, deploymentId, type DeploymentDocument } from './deploymentDocument';

export class DeploymentQueries {
  constructor(private readonly store: ReadStore) {}

  /** The project's latest build of `type`; null when none was ever made. */
  latest(projectId: number, type: string): Promise<DeploymentDocument | null> {
    return this.store.collection<DeploymentDocument>(DEPLOYMENTS).findOne({ _id: deploymentId(projectId, type) });
  }
}

import type { DeploymentEvent } from '../../domain/deployment/deploymentEvents';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { DEPLOYMENTS, deploymentId, type DeploymentDocument } from './deploymentDocument';

/** Each project's latest build of each type; guarded by position, so a replay changes nothing. */
export const deploymentsProjection = defineProjection<DeploymentEvent>('deployments', [DEPLOYMENTS], {
  async DeploymentBuilt(event, store) {
    const { projectId, type } = event.data;
    const collection = store.collection<DeploymentDocument>(DEPLOYMENTS);
    const _id = deploymentId(projectId, type);
    const build = { ...event.data, models: event.data.models.map((m) => ({ ...m })) };
    await insertOnce(collection, { _id, projectId, type, build, _position: '' }, event);
    await updateOnce(collection, _id, { $set: { build } }, event);
  },
});

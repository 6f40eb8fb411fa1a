// The deployment target catalog (DeploymentApi: listAllDeploymentTargets,
// listDeploymentTargetsForProject). A white label shows only the targets it enables: the catalog
// those of the request's host, a project's those of its own white label (api/http/requestWhitelabel.ts).
import { deploymentTargetsFor, type DeploymentTarget } from '../../domain/deployment/deploymentTargets';
import type { ProjectDocument } from '../../projections/projects/projectDocument';
import type { ApiDeps } from '../apiDeps';
import { operation, type Operation } from '../http/operation';
import { whitelabelOfHost, whitelabelOfProject } from '../http/requestWhitelabel';

/** The C++ library builds for any target with a C++ compiler: the recommendation when nothing closer fits. */
const FALLBACK_FORMAT = 'zip';

/**
 * ProjectDeploymentTarget: the target, whether it suits the project (its latency device, from the
 * project's settings or target constraints, else the C++ library), and whether it is disabled.
 */
export function projectDeploymentTargets(targets: readonly DeploymentTarget[], project: ProjectDocument): Record<string, unknown>[] {
  const settings = project.settings;
  const devices = new Set([settings.latencyDevice, ...(settings.targetConstraints?.targetDevices ?? []).map((d) => d.latencyDevice)].filter((d): d is string => typeof d === 'string' && d !== ''));
  const matching = new Set(targets.filter((t) => t.latencyDevice !== undefined && devices.has(t.latencyDevice)).map((t) => t.format));
  if (matching.size === 0) matching.add(FALLBACK_FORMAT);
  return targets.map((t) => ({ ...t, recommendedForProject: matching.has(t.format), disabledForProject: false }));
}

export function deploymentOperations(deps: ApiDeps): Operation[] {
  return [
    operation({
      operationId: 'listAllDeploymentTargets',
      method: 'get',
      path: '/api/deployment/targets',
      summary: 'Every deployment target (those of the white label this host serves, if any)',
      auth: 'any',
      acceptsOrganizationKey: true,
      async handler({ ctx }) {
        return { targets: deploymentTargetsFor(await whitelabelOfHost(deps, ctx)) };
      },
    }),
    operation({
      operationId: 'listDeploymentTargetsForProject',
      method: 'get',
      path: '/api/:projectId/deployment/targets',
      summary: "The deployment targets for the project, with the ones that suit it recommended (its white label's only)",
      auth: 'any',
      async handler({ ctx, project }) {
        return { targets: projectDeploymentTargets(deploymentTargetsFor(await whitelabelOfProject(deps, project, ctx)), project) };
      },
    }),
  ];
}

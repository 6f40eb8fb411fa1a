// The deployment target catalog (DeploymentApi: listAllDeploymentTargets,
// listDeploymentTargetsForProject). A white label shows only the targets it enables: the catalog
// those of the request's host, a project's those of its own white label (api/http/requestWhitelabel.ts).
// Builds (JobsApi.buildOnDeviceModelJob) are jobs like generate-features, refused with a 400 naming
// the type, engine or untrained learn block before any job exists; the latest build of a type is
// answered by getDeployment and downloaded by downloadBuild.
import { z } from 'zod';
import { deployableModels } from '../../commands/deployment/deployableModels';
import { BUILD_ONDEVICE_MODEL, type BuildJobParameters } from '../../commands/deployment/buildDeployment';
import { resolveBuild } from '../../domain/deployment/deploymentBuilds';
import { deploymentTargetsFor, type DeploymentTarget } from '../../domain/deployment/deploymentTargets';
import { NotFoundError, ValidationError } from '../../domain/shared/errors';
import type { DeploymentDocument } from '../../projections/deployments/deploymentDocument';
import type { ProjectDocument } from '../../projections/projects/projectDocument';
import type { ApiDeps } from '../apiDeps';
import { requestProjectJob } from './projectJobRequest';
import { requestContext } from '../auth/principal';
import { operation, queryInteger, type Operation } from '../http/operation';
import { whitelabelOfHost, whitelabelOfProject } from '../http/requestWhitelabel';
import { selectedImpulseId } from './selectedImpulse';

const text = z.string().max(128);
/** The SDK's BuildOnDeviceModelRequest; the engine is checked against the target's (a 400 naming it). */
const BuildOnDeviceModelRequest = z.object({ engine: text, modelType: text.optional(), parameters: z.record(z.string().max(128), z.string().max(1024)).optional() });
const BuildQuery = z.object({ type: text, impulseId: queryInteger.optional() });
/** getDeployment's and downloadBuild's query parameters. */
const DeploymentQuery = z.object({ type: text, modelType: text.optional(), engine: text.optional(), impulseId: queryInteger.optional() });

/** Builds run the model as trained: float32. */
function checkModelType(modelType: string | undefined): void {
  if (modelType !== undefined && modelType !== 'float32') throw new ValidationError(`Model type "${modelType}" is not built by this service: only float32`, 'UNSUPPORTED_MODEL_TYPE');
}

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
  /** The latest build the query asks for (its type, engine and impulse when given), or null. */
  const latestBuild = async (projectId: number, query: z.infer<typeof DeploymentQuery>): Promise<DeploymentDocument | null> => {
    resolveBuild(query.type, query.engine);
    checkModelType(query.modelType);
    const doc = await deps.deployments.latest(projectId, query.type);
    if (!doc) return null;
    if (query.engine !== undefined && doc.build.engine !== query.engine) return null;
    if (query.impulseId !== undefined && doc.build.impulseId !== query.impulseId) return null;
    return doc;
  };
  return [
    operation({
      operationId: 'buildOnDeviceModelJob',
      method: 'post',
      path: '/api/:projectId/jobs/build-ondevice-model',
      summary: 'Start a job that builds the impulse for a deployment target (runner-linux-x86_64 or wasm)',
      auth: 'any',
      body: BuildOnDeviceModelRequest,
      query: BuildQuery,
      async handler({ body, query, project, principal, requestId, settle }) {
        const { type, engine } = resolveBuild(query.type, body.engine);
        checkModelType(body.modelType);
        const impulseId = await selectedImpulseId(deps.impulses, project, query.impulseId);
        const { impulse } = await deployableModels(deps, project.id, impulseId);
        const version = await deps.ids.next('deployment-version');
        const parameters: BuildJobParameters = { type, engine, impulseId: impulse.id, version };
        const jobId = await requestProjectJob({ events: deps.events, ids: deps.ids, projects: deps.projects }, { principal, settle }, { projectId: project.id, category: 'Build on-device model', categoryKey: BUILD_ONDEVICE_MODEL, key: type, parameters: { ...parameters }, notificationList: null }, requestContext(principal, requestId));
        return { id: jobId, deploymentVersion: version };
      },
    }),
    operation({
      operationId: 'getDeployment',
      method: 'get',
      path: '/api/:projectId/deployment',
      summary: 'Whether a build of this deployment type exists, and its version',
      auth: 'any',
      query: DeploymentQuery,
      async handler({ query, project }) {
        const doc = await latestBuild(project.id, query);
        return doc ? { hasDeployment: true, version: doc.build.version } : { hasDeployment: false };
      },
    }),
    operation({
      operationId: 'downloadBuild',
      method: 'get',
      path: '/api/:projectId/deployment/download',
      summary: 'The latest build of this deployment type, as a file',
      auth: 'any',
      query: DeploymentQuery,
      async handler({ ctx, query, project }) {
        const doc = await latestBuild(project.id, query);
        if (!doc) throw new NotFoundError(`No ${query.type} build of this project${query.engine ? ` with engine ${query.engine}` : ''}: start one with POST /api/${project.id}/jobs/build-ondevice-model?type=${query.type}`, 'NO_DEPLOYMENT');
        const { contentType } = resolveBuild(doc.build.type, doc.build.engine);
        ctx.set('Content-Disposition', `attachment; filename="${doc.build.fileName}"`);
        ctx.set('X-Deployment-Version', String(doc.build.version));
        ctx.state.fileBody = { type: contentType, body: await deps.blobs.open(doc.build.artifact) };
        return {};
      },
    }),
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

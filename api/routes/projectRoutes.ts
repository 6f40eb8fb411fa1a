import { z } from 'zod';
import { createProject } from '../../commands/projects/createProject';
import { deleteProject, updateProject } from '../../commands/projects/projectCommands';
import { ForbiddenError, NotFoundError, UnauthorizedError, ValidationError } from '../../domain/shared/errors';
import { PROJECT_NAME_MAX } from '../../domain/project/projectDecider';
import type { ProjectSettingsChange } from '../../domain/project/projectSettings';
import type { ApiDeps } from '../apiDeps';
import { type Principal, requestContext, requireProject } from '../auth/principal';
import { isStaff } from '../auth/staff';
import { asOf, asOfParameter, keepUnlessAsOf } from './asOf';
import { selectedImpulseId } from './selectedImpulse';
import { PERFORMANCE_FIELDS, TargetConstraintsSchema, UpdateProjectRequest, UpdateProjectTagsRequest, type UpdateProjectBody } from './projectSettingsSchemas';
import { intParam, operation, queryBoolean, queryInteger, type Operation } from '../http/operation';
import { withTextRule } from '../http/withTextRule';
import { requireOrganization } from '../auth/organizationAccess';
import { signedInUser } from '../auth/userTarget';
import { whitelabelOfHost } from '../http/requestWhitelabel';
import { whitelabelsOfOrganizations } from '../views/organizationView';
import type { WhitelabelDocument } from '../../projections/whitelabels/whitelabelDocument';
import { projectInfoView, projectViews, usersOfProjects, whitelabelNamesOf } from '../views/projectView';

const CreateProjectRequest = z.object({
  projectName: z.string().min(1).max(PROJECT_NAME_MAX).superRefine(withTextRule({ max: PROJECT_NAME_MAX })),
  projectVisibility: z.enum(['public', 'private']).optional(),
  originalProjectVersionId: z.number().int().optional(),
  showGettingStartedWizard: z.boolean().optional(),
  tutorialKey: z.enum(['kws', 'cv']).optional(),
  createApiKey: z.boolean().optional(),
});

/** The request's fields as settings: visibility as `isPublic`, the limits grouped as `performance`. */
function settingsChange(body: UpdateProjectBody, principal: Principal, deps: ApiDeps): ProjectSettingsChange {
  const { projectVisibility, useGpu, computeTimeLimitM, dspFileSizeMb, enterprisePerformance, trainJobRamMb, ...rest } = body;
  const performance = Object.fromEntries(
    Object.entries({ useGpu, computeTimeLimitM, dspFileSizeMb, enterprisePerformance, trainJobRamMb }).filter(([, v]) => v !== undefined),
  );
  if (Object.keys(performance).length > 0 && !(principal.kind === 'user' && isStaff(principal.user, deps.settings.staffUsernames))) {
    throw new ForbiddenError(`Only staff may change a project's limits (${PERFORMANCE_FIELDS.join(', ')})`);
  }
  if (rest.experiments !== undefined && !(principal.kind === 'user' && principal.via === 'jwt')) {
    throw new ForbiddenError('Experiments may be enabled only by a user logged in with a JWT');
  }
  return {
    ...(rest as ProjectSettingsChange),
    ...(projectVisibility === undefined ? {} : { isPublic: projectVisibility === 'public' }),
    ...(Object.keys(performance).length > 0 ? { performance } : {}),
  };
}

/** The SDK's UpdateOrganizationCreateEmptyProjectRequest. */
const CreateOrganizationProjectRequest = CreateProjectRequest.omit({ originalProjectVersionId: true }).extend({
  projectOwnerUsernameOrEmail: z.string().min(1).max(256).optional(),
});

/** What project creation needs of the white label a request came to. */
const hostWhitelabelOf = (w: WhitelabelDocument | null) => (w ? { whitelabelId: w.id, allowFreeProjects: w.allowFreeProjects } : undefined);

export function projectOperations(deps: ApiDeps): Operation[] {
  const outerDeps = deps;
  /** Projects of an organization are made by its signed-in admins and members (and staff), never with a key. */
  const organizationProjectCreator = async (principal: Principal, params: Record<string, string>) => {
    if (principal.kind !== 'user') throw new ForbiddenError("An organization's projects are created by a signed-in admin or member, not with an API key");
    return requireOrganization(deps, principal, intParam(params, 'organizationId'), 'read');
  };
  return [
    operation({
      operationId: 'createProject',
      method: 'post',
      path: '/api/projects/create',
      summary: "Create a project owned by the current user (in the white label of the request's host, if it allows free projects)",
      auth: 'any',
      body: CreateProjectRequest,
      async handler({ principal, body, ctx, requestId, settle }) {
        if (principal.kind !== 'user') throw new ForbiddenError('Projects are created by users: log in and send a JWT');
        const { projectId, apiKey, position } = await createProject(
          deps,
          { name: body.projectName, ownerUserId: principal.user.id, isPublic: body.projectVisibility === 'public', hostWhitelabel: hostWhitelabelOf(await whitelabelOfHost(deps, ctx)) },
          requestContext(principal, requestId),
        );
        await settle(position);
        // OAuth callers never get a key back, and a caller may ask for none.
        const returnKey = principal.via === 'jwt' && body.createApiKey !== false;
        return { id: projectId, apiKey: returnKey ? apiKey : '' };
      },
    }),
    operation({
      operationId: 'organizationCreateEmptyProject',
      method: 'post',
      path: '/api/organizations/:organizationId/new-project',
      summary: "Create a project owned by the organization (its admins and members): it is in the organization's white label, or in the host's",
      auth: 'any',
      // An organization key is answered 403 like every organization route refuses a key, not 401.
      acceptsOrganizationKey: true,
      body: CreateOrganizationProjectRequest,
      async authorize(principal, params) {
        await organizationProjectCreator(principal, params);
      },
      async handler({ principal, params, body, ctx, requestId, settle }) {
        const organizationId = intParam(params, 'organizationId');
        const caller = await organizationProjectCreator(principal, params);
        let ownerUserId = signedInUser(principal).id;
        if (body.projectOwnerUsernameOrEmail !== undefined) {
          const owner = await deps.users.byUsernameOrEmail(body.projectOwnerUsernameOrEmail);
          const member = owner && caller.organization.members.find((m) => m.userId === owner.id && m.role !== 'guest');
          if (!owner || !member) throw new ValidationError(`"projectOwnerUsernameOrEmail": ${body.projectOwnerUsernameOrEmail} is not an admin or member of organization ${organizationId}`);
          ownerUserId = owner.id;
        }
        const [host, owned] = await Promise.all([whitelabelOfHost(deps, ctx), whitelabelsOfOrganizations(deps, [organizationId])]);
        const { projectId, apiKey, position } = await createProject(
          deps,
          {
            name: body.projectName,
            ownerUserId,
            isPublic: body.projectVisibility === 'public',
            hostWhitelabel: hostWhitelabelOf(host),
            ownerOrganization: { organizationId, whitelabelId: owned.get(organizationId)?.id ?? null },
          },
          requestContext(principal, requestId),
        );
        await settle(position);
        return { id: projectId, apiKey: principal.kind === 'user' && principal.via === 'jwt' && body.createApiKey !== false ? apiKey : '' };
      },
    }),
    operation({
      operationId: 'listProjects',
      method: 'get',
      path: '/api/projects',
      summary: "The user's projects, or the API key's project",
      auth: 'any',
      keepAnswer: () => true,
      async handler({ principal }) {
        if (principal.kind === 'apiKey') {
          // The same rule as `GET /api/:projectId`: an ingestion-only key reads nothing here.
          const project = await requireProject(deps.projects, principal, principal.projectId, 'read');
          return { projects: await projectViews(deps, [project], 'apiKey') };
        }
        // Never an organization key (refused before the handler), narrowed for the compiler.
        if (principal.kind !== 'user') throw new UnauthorizedError('Invalid API key', 'INVALID_API_KEY');
        return { projects: await projectViews(deps, await deps.projects.forCollaborator(principal.user.id)) };
      },
    }),
    operation({
      operationId: 'getProjectInfo',
      method: 'get',
      path: '/api/:projectId',
      summary: 'Project information',
      auth: 'any',
      query: z.object({ impulseId: queryInteger.optional(), truncateLabels: queryBoolean.optional(), asOf: asOfParameter.optional() }),
      keepAnswer: keepUnlessAsOf,
      async handler({ principal, query, project: current }) {
        // With asOf, the same code answers from the read models as they were then.
        const then = query.asOf !== undefined ? await asOf(outerDeps, current.id, query.asOf) : undefined;
        const deps = then?.deps ?? outerDeps;
        const project = then?.project ?? current;
        const now = then?.now ?? new Date();
        // Independent reads side by side: on a networked read store each is a round trip.
        const [users, whitelabelNames, asked, chosen, devices, computeTimeUsedMs] = await Promise.all([
          usersOfProjects(deps, [project]),
          whitelabelNamesOf(deps, [project]),
          query.impulseId === undefined ? undefined : deps.impulses.byId(project.id, query.impulseId),
          selectedImpulseId(deps.impulses, project, undefined),
          deps.devices.forProject(project.id),
          deps.jobs.computeTimeUsedMs(project.id, now),
        ]);
        if (query.impulseId !== undefined && !asked) {
          throw new NotFoundError(`Impulse ${query.impulseId} not found in project ${project.id}`, 'IMPULSE_NOT_FOUND');
        }
        const status = await deps.impulses.statusOf(project.id, query.impulseId ?? chosen);
        const defaultImpulseId = chosen ?? status.defaultImpulseId;
        return projectInfoView(project, users, {
          impulse: { ...status, defaultImpulseId },
          devices,
          truncateLabels: query.truncateLabels ?? false,
          showDevelopmentKeys: principal.kind === 'user' && principal.via === 'jwt',
          audience: principal.kind === 'apiKey' ? 'apiKey' : 'collaborator',
          staffUsernames: deps.settings.staffUsernames,
          studioUrl: deps.settings.publicUrl,
          now,
          computeTimeUsedMs,
          whitelabelNames,
        });
      },
    }),
    operation({
      operationId: 'listDevkeys',
      method: 'get',
      path: '/api/:projectId/devkeys',
      summary: "The project's development API and HMAC keys (JWT only; API keys get neither)",
      auth: 'any',
      async handler({ principal, params, project }) {
        if (!(principal.kind === 'user' && principal.via === 'jwt')) return { apiKey: undefined, hmacKey: undefined };
        return { apiKey: project.developmentApiKey ?? undefined, hmacKey: project.developmentHmacKey ?? undefined };
      },
    }),
    operation({
      operationId: 'updateProject',
      method: 'post',
      path: '/api/:projectId',
      summary: "Change the project's settings; only the fields given change",
      auth: 'any',
      body: UpdateProjectRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const change = settingsChange(body, principal, deps);
        if (change.defaultImpulseId !== undefined && change.defaultImpulseId !== null) {
          const impulse = await deps.impulses.byId(intParam(params, 'projectId'), change.defaultImpulseId);
          if (!impulse) throw new ValidationError(`"defaultImpulseId": impulse ${change.defaultImpulseId} does not exist in this project`);
        }
        const position = await updateProject(deps, intParam(params, 'projectId'), change, requestContext(principal, requestId));
        await settle(position);
        return {};
      },
    }),
    operation({
      operationId: 'updateProjectTags',
      method: 'post',
      path: '/api/:projectId/tags',
      summary: "Replace the project's tags",
      auth: 'any',
      body: UpdateProjectTagsRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const position = await updateProject(deps, intParam(params, 'projectId'), { tags: body.tags }, requestContext(principal, requestId));
        await settle(position);
        return {};
      },
    }),
    operation({
      operationId: 'getTargetConstraints',
      method: 'get',
      path: '/api/:projectId/target-constraints',
      summary: "The project's target devices and application budgets",
      auth: 'any',
      async handler({ principal, params, project }) {
        return { targetConstraints: project.settings?.targetConstraints ?? { targetDevices: [], applicationBudgets: [] } };
      },
    }),
    operation({
      operationId: 'setTargetConstraints',
      method: 'post',
      path: '/api/:projectId/target-constraints',
      summary: "Set the project's target devices and application budgets",
      auth: 'any',
      body: TargetConstraintsSchema,
      async handler({ principal, params, body, requestId, settle }) {
        const position = await updateProject(deps, intParam(params, 'projectId'), { targetConstraints: body }, requestContext(principal, requestId));
        await settle(position);
        return {};
      },
    }),
    operation({
      operationId: 'deleteProject',
      method: 'delete',
      path: '/api/:projectId',
      summary: 'Delete the project (its owner only): it is gone at once, its data is removed for good at the scheduled full deletion',
      auth: 'any',
      async handler({ principal, params, requestId, settle, project }) {
        if (!(principal.kind === 'user' && principal.user.id === project.ownerUserId)) throw new ForbiddenError('Only the owner of a project can delete it');
        const position = await deleteProject(deps, project.id, deps.settings.projectDeletionDelayMs, requestContext(principal, requestId));
        await settle(position);
        return {};
      },
    }),
  ];
}

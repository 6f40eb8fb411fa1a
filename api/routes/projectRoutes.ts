import { z } from 'zod';
import { createProject } from '../../commands/projects/createProject';
import { ForbiddenError } from '../../domain/shared/errors';
import { PROJECT_NAME_MAX } from '../../domain/project/projectDecider';
import type { ApiDeps } from '../apiDeps';
import { actorOf, requireProject } from '../auth/principal';
import { intParam, operation, queryBoolean, queryInteger, type Operation } from '../http/operation';
import { projectInfoView } from '../views/projectView';
import { projectViews, usersOfProjects } from './currentUserRoutes';

const CreateProjectRequest = z.object({
  projectName: z.string().min(1).max(PROJECT_NAME_MAX),
  projectVisibility: z.enum(['public', 'private']).optional(),
  originalProjectVersionId: z.number().int().optional(),
  showGettingStartedWizard: z.boolean().optional(),
  tutorialKey: z.enum(['kws', 'cv']).optional(),
  createApiKey: z.boolean().optional(),
});

export function projectOperations(deps: ApiDeps): Operation[] {
  return [
    operation({
      operationId: 'createProject',
      method: 'post',
      path: '/api/projects/create',
      summary: 'Create a project owned by the current user',
      auth: 'any',
      body: CreateProjectRequest,
      async handler({ principal, body, requestId, settle }) {
        if (principal.kind !== 'user') throw new ForbiddenError('Projects are created by users: log in and send a JWT');
        const { projectId, apiKey, position } = await createProject(
          deps,
          { name: body.projectName, ownerUserId: principal.user.id, isPublic: body.projectVisibility === 'public' },
          { actor: actorOf(principal), correlationId: requestId, now: new Date() },
        );
        await settle(position);
        // OAuth callers never get a key back, and a caller may ask for none.
        const returnKey = principal.via === 'jwt' && body.createApiKey !== false;
        return { id: projectId, apiKey: returnKey ? apiKey : '' };
      },
    }),
    operation({
      operationId: 'listProjects',
      method: 'get',
      path: '/api/projects',
      summary: "The user's projects, or the API key's project",
      auth: 'any',
      async handler({ principal }) {
        if (principal.kind === 'apiKey') {
          const project = await deps.projects.byId(principal.projectId);
          return { projects: project ? await projectViews(deps, [project]) : [] };
        }
        return { projects: await projectViews(deps, await deps.projects.forCollaborator(principal.user.id)) };
      },
    }),
    operation({
      operationId: 'getProjectInfo',
      method: 'get',
      path: '/api/:projectId',
      summary: 'Project information',
      auth: 'any',
      query: z.object({ impulseId: queryInteger.optional(), truncateLabels: queryBoolean.optional() }),
      async handler({ principal, params, query }) {
        const project = await requireProject(deps.projects, principal, intParam(params, 'projectId'), 'read');
        const users = await usersOfProjects(deps, [project]);
        return projectInfoView(project, users, {
          devices: await deps.devices.forProject(project.id),
          truncateLabels: query.truncateLabels ?? false,
          showDevelopmentKeys: principal.kind === 'user' && principal.via === 'jwt',
          staffUsernames: deps.settings.staffUsernames,
          studioUrl: deps.settings.publicUrl,
          now: new Date(),
        });
      },
    }),
    operation({
      operationId: 'listDevkeys',
      method: 'get',
      path: '/api/:projectId/devkeys',
      summary: "The project's development API and HMAC keys (JWT only; API keys get neither)",
      auth: 'any',
      async handler({ principal, params }) {
        const project = await requireProject(deps.projects, principal, intParam(params, 'projectId'), 'read');
        if (!(principal.kind === 'user' && principal.via === 'jwt')) return { apiKey: undefined, hmacKey: undefined };
        return { apiKey: project.developmentApiKey ?? undefined, hmacKey: project.developmentHmacKey ?? undefined };
      },
    }),
  ];
}

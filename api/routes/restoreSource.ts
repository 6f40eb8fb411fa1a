// Whether the caller of a restore (RestoreProjectRequest) may read the version it names: with
// `projectApiKey`, a live key of the source project (any role reads); else the caller itself (a
// collaborator's JWT, or an API key of the source project). Every refusal, an unknown project or
// version included, answers the same 404, so a caller learns nothing about projects it cannot read.
// `reader` is who read it, for the job to check again when it starts (restoreAccess.ts).
import { ForbiddenError, NotFoundError } from '../../domain/shared/errors';
import type { ApiKeyQueries } from '../../projections/apiKeys/apiKeyQueries';
import type { Project, ProjectQueries } from '../../projections/projects/projectQueries';
import type { VersionDocument } from '../../projections/versions/versionDocument';
import type { VersionQueries } from '../../projections/versions/versionQueries';
import type { RestoreReader } from '../../commands/versions/restoreAccess';
import { requireProject, type Principal } from '../auth/principal';

export interface RestoreSourceDeps {
  projects: Pick<ProjectQueries, 'byId'>;
  apiKeys: Pick<ApiKeyQueries, 'live'>;
  versions: Pick<VersionQueries, 'byId'>;
}

export async function restoreSource(
  deps: RestoreSourceDeps,
  caller: Principal,
  request: { projectId: number; versionId: number; projectApiKey?: string },
  now = new Date(),
): Promise<{ project: Project; version: VersionDocument; reader: RestoreReader }> {
  const unreadable = new NotFoundError(`No version ${request.versionId} of project ${request.projectId} is readable with these credentials`, 'VERSION_NOT_FOUND');
  let principal = caller;
  if (request.projectApiKey !== undefined) {
    const key = await deps.apiKeys.live(request.projectApiKey, now);
    if (!key) throw unreadable;
    principal = { kind: 'apiKey', apiKeyId: key.apiKeyId, projectId: key.projectId, role: key.role };
  }
  let project: Project;
  try {
    project = await requireProject(deps.projects, principal, request.projectId, 'read');
  } catch (error) {
    if (error instanceof NotFoundError || error instanceof ForbiddenError) throw unreadable;
    throw error;
  }
  const version = await deps.versions.byId(project.id, request.versionId);
  if (!version) throw unreadable;
  const reader: RestoreReader = principal.kind === 'user' ? { kind: 'user', userId: principal.user.id } : { kind: 'apiKey', apiKeyId: (principal as Extract<Principal, { kind: 'apiKey' }>).apiKeyId };
  return { project, version, reader };
}

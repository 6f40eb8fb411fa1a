import { z } from 'zod';
import type { ProjectDocument } from '../../projections/projects/projectDocument';
import type { UserDocument } from '../../projections/users/userDocument';
import type { ApiDeps } from '../apiDeps';
import type { Principal } from '../auth/principal';
import { operation, queryBoolean, type Operation } from '../http/operation';
import { projectView } from '../views/projectView';
import { getUserView } from '../views/userView';

/** The users a set of projects refers to (owners and collaborators), fetched in one query. */
export async function usersOfProjects(deps: ApiDeps, projects: readonly ProjectDocument[]): Promise<Map<number, UserDocument>> {
  const ids = new Set<number>();
  for (const p of projects) {
    ids.add(p.ownerUserId);
    for (const c of p.collaborators) ids.add(c.userId);
  }
  const users = await deps.users.byIds([...ids]);
  return new Map(users.map((u) => [u.id, u]));
}

export async function projectViews(deps: ApiDeps, projects: readonly ProjectDocument[]): Promise<Record<string, unknown>[]> {
  const users = await usersOfProjects(deps, projects);
  return projects.map((p) => projectView(p, users));
}

const currentUser = (principal: Principal): UserDocument => {
  if (principal.kind !== 'user') throw new Error('unreachable: JWT-only operation without a user');
  return principal.user;
};

export function currentUserOperations(deps: ApiDeps): Operation[] {
  return [
    operation({
      operationId: 'getCurrentUser',
      method: 'get',
      path: '/api/user',
      summary: 'The current user, with their projects',
      auth: 'jwt',
      query: z.object({ excludeProjects: queryBoolean.optional() }),
      async handler({ principal, query }) {
        const user = currentUser(principal);
        const projects = query.excludeProjects ? [] : await projectViews(deps, await deps.projects.forCollaborator(user.id));
        return getUserView(user, projects);
      },
    }),
    operation({
      operationId: 'getCurrentUserProjects',
      method: 'get',
      path: '/api/user/projects',
      summary: "The current user's projects",
      auth: 'jwt',
      async handler({ principal }) {
        const user = currentUser(principal);
        return { projects: await projectViews(deps, await deps.projects.forCollaborator(user.id)) };
      },
    }),
  ];
}

import { z } from 'zod';
import { addCollaborator, removeCollaborator } from '../../commands/projects/projectCommands';
import { NotFoundError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { intParam, operation, type Operation } from '../http/operation';

const CollaboratorRequest = z.object({ usernameOrEmail: z.string().trim().min(1).max(256) }).strict();

/** Collaborators, named by username or e-mail address. */
export function collaboratorOperations(deps: ApiDeps): Operation[] {
  const userNamed = async (usernameOrEmail: string) => {
    const user = await deps.users.byUsernameOrEmail(usernameOrEmail);
    if (!user) throw new NotFoundError(`No user with username or e-mail "${usernameOrEmail}"`, 'USER_NOT_FOUND');
    return user;
  };
  return [
    operation({
      operationId: 'addCollaborator',
      method: 'post',
      path: '/api/:projectId/collaborators/add',
      summary: 'Add a collaborator by username or e-mail; they see and may change the project',
      auth: 'any',
      body: CollaboratorRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const user = await userNamed(body.usernameOrEmail);
        const position = await addCollaborator(deps, intParam(params, 'projectId'), user.id, requestContext(principal, requestId));
        await settle(position);
        return { id: user.id };
      },
    }),
    operation({
      operationId: 'removeCollaborator',
      method: 'post',
      path: '/api/:projectId/collaborators/remove',
      summary: 'Remove a collaborator (never the owner, never the last one)',
      auth: 'any',
      body: CollaboratorRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const user = await userNamed(body.usernameOrEmail);
        const position = await removeCollaborator(deps, intParam(params, 'projectId'), user.id, requestContext(principal, requestId));
        await settle(position);
        return {};
      },
    }),
  ];
}

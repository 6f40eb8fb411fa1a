import { z } from 'zod';
import { inviteCollaborator, removeCollaborator, withdrawCollaboratorInvitation } from '../../commands/projects/projectCommands';
import { INVITED_AS_MAX } from '../../domain/project/projectDecider';
import { ConflictError, ForbiddenError, NotFoundError } from '../../domain/shared/errors';
import { checkText } from '../../domain/shared/textRules';
import type { ApiDeps } from '../apiDeps';
import { type Principal, requestContext } from '../auth/principal';
import { intParam, operation, type Operation } from '../http/operation';

const CollaboratorRequest = z.object({ usernameOrEmail: z.string().trim().min(1).max(256) }).strict();

const userIdOf = (p: Principal): number | null => (p.kind === 'user' ? p.user.id : null);

/**
 * Collaborators, named by username or e-mail address. Adding someone invites them: they become a
 * collaborator only when they accept (see invitationRoutes), and until then the project sees only
 * the name it typed. Inviting takes a person logged in with a JWT: an API key, which may leak from
 * a device or a CI job, must not be able to give a human account lasting access.
 */
export function collaboratorOperations(deps: ApiDeps): Operation[] {
  return [
    operation({
      operationId: 'addCollaborator',
      method: 'post',
      path: '/api/:projectId/collaborators/add',
      summary: 'Invite a user by username or e-mail; they become a collaborator once they accept (JWT only)',
      auth: 'any',
      async authorize(principal) {
        if (!(principal.kind === 'user' && principal.via === 'jwt')) {
          throw new ForbiddenError('Only a person logged in with a JWT can invite collaborators; API keys and OAuth tokens cannot', 'JWT_REQUIRED');
        }
      },
      body: CollaboratorRequest,
      async handler({ principal, params, body, requestId, settle, project }) {
        checkText(body.usernameOrEmail, '"usernameOrEmail"', { max: INVITED_AS_MAX });
        // A name with no account is invited all the same (an invitation nobody can accept): the answer
        // never tells whether someone has an account. Collaborators see each other, so naming one is no news.
        const user = await deps.users.byUsernameOrEmail(body.usernameOrEmail);
        // The decider decides; this answers the usual refusal before an invitation id is drawn.
        if (user && project.collaboratorIds.includes(user.id)) throw new ConflictError('This user is already a collaborator on the project');
        const { invitationId, position } = await inviteCollaborator(
          deps,
          intParam(params, 'projectId'),
          { userId: user?.id ?? null, invitedAs: body.usernameOrEmail, invitedByUserId: userIdOf(principal)! },
          requestContext(principal, requestId),
        );
        await settle(position);
        // The id of what was created: the invitation (the SDK's EntityCreatedResponse).
        return { id: invitationId };
      },
    }),
    operation({
      operationId: 'removeCollaborator',
      method: 'post',
      path: '/api/:projectId/collaborators/remove',
      summary: 'Remove a collaborator (never the owner, never the last one), or withdraw their pending invitation',
      auth: 'any',
      body: CollaboratorRequest,
      async handler({ principal, body, requestId, settle, project }) {
        // Only names the project already sees: its collaborators, and the names its invitations were
        // sent to. Anyone else, with an account or without, gets the same 404.
        const named = body.usernameOrEmail.toLowerCase();
        const user = await deps.users.byUsernameOrEmail(body.usernameOrEmail);
        const ctx = requestContext(principal, requestId);
        let position;
        if (user && project.collaboratorIds.includes(user.id)) {
          position = await removeCollaborator(deps, project.id, user.id, userIdOf(principal), ctx);
        } else {
          const invitation = (project.invitations ?? []).find((i) => i.invitedAs?.trim().toLowerCase() === named);
          if (!invitation) throw new NotFoundError(`No collaborator or pending invitation named "${body.usernameOrEmail}" in this project`, 'COLLABORATOR_NOT_FOUND');
          position = await withdrawCollaboratorInvitation(deps, project.id, invitation.invitationId, userIdOf(principal), ctx);
        }
        await settle(position);
        return {};
      },
    }),
    operation({
      operationId: 'withdrawCollaboratorInvitation',
      method: 'delete',
      path: '/api/:projectId/collaborators/invitations/:invitationId',
      summary: 'Withdraw an invitation the invitee has not answered',
      auth: 'any',
      async handler({ principal, params, requestId, settle, project }) {
        const position = await withdrawCollaboratorInvitation(deps, project.id, intParam(params, 'invitationId'), userIdOf(principal), requestContext(principal, requestId));
        await settle(position);
        return {};
      },
    }),
  ];
}

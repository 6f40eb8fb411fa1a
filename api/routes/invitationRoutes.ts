import { z } from 'zod';
import { acceptInvitationsOnActivation } from '../../commands/organizations/organizationCommands';
import { acceptCollaboratorInvitation, declineCollaboratorInvitation } from '../../commands/projects/projectCommands';
import { activatePendingUser } from '../../commands/users/pendingUser';
import { hashCode } from '../../commands/users/secrets';
import { ValidationError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { clientAddress, type ClientRequest } from '../auth/throttleKeys';
import { refusedWithRetryAfter } from '../auth/throttleAnswers';
import { operation, type Operation } from '../http/operation';
import { getUserView } from '../views/userView';
import { Password } from './accountRoutes';
import { inviteeOperations } from './inviteeOperations';

const INVALID = 'Invalid activation code';

/**
 * Users created on someone's behalf (invitations) look themselves up and activate with the
 * third-party code they were e-mailed. The code is the credential: no other authentication.
 */
export function invitationOperations(deps: ApiDeps): Operation[] {
  // A wrong code names no account, so every guess of an invitation code counts on one shared key:
  // an address that guessed wrong ten times is refused these two operations; everyone else waits a
  // bounded delay while guessing goes on.
  const pendingUser = (code: string, ctx: ClientRequest & { set(field: string, value: string): void }) =>
    refusedWithRetryAfter(ctx, () =>
      deps.throttle.guard({ account: 'invitation-code', address: clientAddress(ctx, deps.settings.trustedProxyHops) }, async () => {
        const user = await deps.users.byThirdPartyCodeHash(hashCode(code));
        if (!user) throw new ValidationError(INVALID, 'INVALID_CODE');
        return user;
      }),
    );
  return [
    ...projectInvitationOperations(deps),
    operation({
      operationId: 'getUserByThirdPartyActivationCode',
      method: 'post',
      path: '/api/user/by-third-party-activation-code',
      summary: 'The pending user a third-party activation code belongs to',
      auth: 'none',
      body: z.object({ activationCode: z.string().min(1).max(64) }),
      async handler({ body, ctx }) {
        const user = await pendingUser(body.activationCode, ctx);
        return getUserView(user, { ...deps.settings, projects: [], organizations: [], whitelabels: [], trials: [], now: new Date() });
      },
    }),
    operation({
      operationId: 'activateUserByThirdPartyActivationCode',
      method: 'post',
      path: '/api/user/activate-by-third-party-activation-code',
      summary: 'Activate a pending user with their code, a username and a password; answers a JWT',
      auth: 'none',
      body: z.object({
        activationCode: z.string().min(1).max(64),
        password: Password,
        username: z.string().min(1).max(64),
        name: z.string().max(256).optional(),
        privacyPolicy: z.boolean().optional(),
      }),
      async handler({ body, ctx, requestId, settle }) {
        if (body.privacyPolicy === false) throw new ValidationError('The privacy policy must be accepted to create an account');
        const user = await pendingUser(body.activationCode, ctx);
        const now = new Date();
        const command = { actor: `user:${user.id}`, correlationId: requestId, now };
        const { sessionVersion, position } = await activatePendingUser(
          deps,
          { userId: user.id, oldUsername: user.username, code: body.activationCode, username: body.username, name: body.name ?? null, password: body.password },
          command,
        );
        // The code came with an organization's invitation: using it is the mailbox holder's consent to that one.
        const accepted = await acceptInvitationsOnActivation(deps, user.id, command);
        await settle(accepted !== undefined && accepted > position ? accepted : position);
        return { token: await deps.tokens.issue(user.id, sessionVersion, now) };
      },
    }),
  ];
}

/**
 * Invitations to collaborate on a project, answered by the invitee with their JWT (their own act:
 * no API key or OAuth token answers for them). Until they accept, the project is not in their
 * lists and they have no access to it.
 */
function projectInvitationOperations(deps: ApiDeps): Operation[] {
  return inviteeOperations(deps, {
    path: '/api/user/invitations',
    ids: { list: 'listCurrentUserProjectInvitations', accept: 'acceptCurrentUserProjectInvitation', decline: 'declineCurrentUserProjectInvitation' },
    summaries: {
      list: 'Invitations to collaborate on projects that wait for your answer (JWT only)',
      accept: 'Accept an invitation: you become a collaborator of the project (JWT only)',
      decline: 'Decline an invitation: the project learns nothing more about you (JWT only)',
    },
    invitingUser: (userId) => deps.projects.invitingUser(userId),
    view: (project, invitation) => ({ projectId: project.id, projectName: project.name, invited: invitation.invited }),
    accept: (projectId, invitationId, userId, ctx) => acceptCollaboratorInvitation(deps, projectId, invitationId, userId, ctx),
    accepted: (projectId) => ({ projectId }),
    decline: (projectId, invitationId, userId, ctx) => declineCollaboratorInvitation(deps, projectId, invitationId, userId, ctx),
  });
}

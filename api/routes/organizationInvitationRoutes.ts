import { acceptMemberInvitation, declineMemberInvitation } from '../../commands/organizations/organizationCommands';
import { NotFoundError } from '../../domain/shared/errors';
import type { OrganizationDocument, OrganizationInvitationEntry } from '../../projections/organizations/organizationDocument';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { signedInUser } from '../auth/userTarget';
import { intParam, operation, type Operation } from '../http/operation';

/**
 * Invitations to join an organization, answered by the invitee with their JWT (their own act: no
 * API key or OAuth token answers for them). Until they accept, the organization is not in their
 * lists, they have no access to it, and it sees only what its admin typed.
 */
export function organizationInvitationOperations(deps: ApiDeps): Operation[] {
  const pendingFor = async (userId: number): Promise<{ organization: OrganizationDocument; invitation: OrganizationInvitationEntry }[]> =>
    (await deps.organizations.invitingUser(userId)).flatMap((organization) =>
      (organization.invitations ?? []).filter((i) => i.userId === userId).map((invitation) => ({ organization, invitation })),
    );
  const invitationOf = async (userId: number, params: Record<string, string>) => {
    const invitationId = intParam(params, 'invitationId');
    const found = (await pendingFor(userId)).find((p) => p.invitation.invitationId === invitationId);
    if (!found) throw new NotFoundError(`No pending invitation ${invitationId} for you`, 'INVITATION_NOT_FOUND');
    return found;
  };
  return [
    operation({
      operationId: 'listCurrentUserOrganizationInvitations',
      method: 'get',
      path: '/api/user/organization-invitations',
      summary: 'Invitations to join organizations that wait for your answer (JWT only)',
      auth: 'jwt',
      async handler({ principal }) {
        const pending = await pendingFor(signedInUser(principal).id);
        const inviters = new Map((await deps.users.byIds([...new Set(pending.map((p) => p.invitation.invitedByUserId))])).map((u) => [u.id, u]));
        return {
          invitations: pending.map(({ organization, invitation }) => {
            const by = inviters.get(invitation.invitedByUserId);
            return {
              id: invitation.invitationId,
              organizationId: organization.id,
              organizationName: organization.name,
              role: invitation.role,
              datasets: invitation.datasets,
              invited: invitation.invited,
              invitedBy: by ? { id: by.id, username: by.username, name: by.name ?? by.username } : null,
            };
          }),
        };
      },
    }),
    operation({
      operationId: 'acceptCurrentUserOrganizationInvitation',
      method: 'post',
      path: '/api/user/organization-invitations/:invitationId/accept',
      summary: 'Accept an invitation: you become a member of the organization with the role and datasets offered (JWT only)',
      auth: 'jwt',
      async handler({ principal, params, requestId, settle }) {
        const me = signedInUser(principal);
        const { organization, invitation } = await invitationOf(me.id, params);
        await settle(await acceptMemberInvitation(deps.events, organization.id, invitation.invitationId, me.id, requestContext(principal, requestId)));
        return { organizationId: organization.id };
      },
    }),
    operation({
      operationId: 'declineCurrentUserOrganizationInvitation',
      method: 'post',
      path: '/api/user/organization-invitations/:invitationId/decline',
      summary: 'Decline an invitation: the organization learns nothing more about you (JWT only)',
      auth: 'jwt',
      async handler({ principal, params, requestId, settle }) {
        const me = signedInUser(principal);
        const { organization, invitation } = await invitationOf(me.id, params);
        await settle(await declineMemberInvitation(deps.events, organization.id, invitation.invitationId, me.id, requestContext(principal, requestId)));
        return {};
      },
    }),
  ];
}

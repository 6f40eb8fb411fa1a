import { acceptMemberInvitation, declineMemberInvitation } from '../../commands/organizations/organizationCommands';
import type { ApiDeps } from '../apiDeps';
import type { Operation } from '../http/operation';
import { inviteeOperations } from './inviteeOperations';

/**
 * Invitations to join an organization, answered by the invitee with their JWT (their own act: no
 * API key or OAuth token answers for them). Until they accept, the organization is not in their
 * lists, they have no access to it, and it sees only what its admin typed.
 */
export function organizationInvitationOperations(deps: ApiDeps): Operation[] {
  return inviteeOperations(deps, {
    path: '/api/user/organization-invitations',
    ids: { list: 'listCurrentUserOrganizationInvitations', accept: 'acceptCurrentUserOrganizationInvitation', decline: 'declineCurrentUserOrganizationInvitation' },
    summaries: {
      list: 'Invitations to join organizations that wait for your answer (JWT only)',
      accept: 'Accept an invitation: you become a member of the organization with the role and datasets offered (JWT only)',
      decline: 'Decline an invitation: the organization learns nothing more about you (JWT only)',
    },
    invitingUser: (userId) => deps.organizations.invitingUser(userId),
    view: (organization, invitation) => ({
      organizationId: organization.id,
      organizationName: organization.name,
      role: invitation.role,
      datasets: invitation.datasets,
      invited: invitation.invited,
    }),
    accept: (organizationId, invitationId, userId, ctx) => acceptMemberInvitation(deps.events, organizationId, invitationId, userId, ctx),
    accepted: (organizationId) => ({ organizationId }),
    decline: (organizationId, invitationId, userId, ctx) => declineMemberInvitation(deps.events, organizationId, invitationId, userId, ctx),
  });
}

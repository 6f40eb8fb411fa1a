import { call } from './testService';

/**
 * Makes `usernameOrEmail` a collaborator the only way there is: the inviter (a JWT) invites, the
 * invitee (their own JWT) accepts. Throws when either step is refused.
 */
export async function inviteAndAccept(
  service: { apiUrl: string },
  projectId: number,
  inviterToken: string,
  inviteeToken: string,
  usernameOrEmail: string,
): Promise<number> {
  const invited = await call(service, 'POST', `/api/${projectId}/collaborators/add`, { headers: { 'x-jwt-token': inviterToken }, body: { usernameOrEmail } });
  if (invited.status !== 200) throw new Error(`inviting ${usernameOrEmail} answered ${invited.status}: ${JSON.stringify(invited.body)}`);
  const invitationId = Number(invited.body.id);
  const accepted = await call(service, 'POST', `/api/user/invitations/${invitationId}/accept`, { headers: { 'x-jwt-token': inviteeToken } });
  if (accepted.status !== 200) throw new Error(`accepting invitation ${invitationId} answered ${accepted.status}: ${JSON.stringify(accepted.body)}`);
  return invitationId;
}

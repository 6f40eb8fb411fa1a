// What an invitee does with their invitations (to a project, to an organization): list them, accept,
// decline. Their own act, with their own JWT: no API key or OAuth token answers for them, and an
// invitation to someone else is not found.
import { NotFoundError } from '../../domain/shared/errors';
import type { Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../../commands/commandContext';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { signedInUser } from '../auth/userTarget';
import { intParam, operation, type Operation } from '../http/operation';

interface Invitation {
  invitationId: number;
  userId: number | null;
  invitedByUserId: number;
}

export interface InviteeSpec<Host, I extends Invitation> {
  /** The listing's path; accept and decline are below it (`/:invitationId/accept`). */
  path: string;
  ids: { list: string; accept: string; decline: string };
  summaries: { list: string; accept: string; decline: string };
  /** The hosts (projects, organizations) with pending invitations to this user. */
  invitingUser(userId: number): Promise<readonly (Host & { id: number; invitations?: I[] })[]>;
  /** An invitation as the invitee sees it, without `id` and `invitedBy` (added here). */
  view(host: Host, invitation: I): Record<string, unknown>;
  accept(hostId: number, invitationId: number, userId: number, ctx: CommandContext): Promise<Position | undefined>;
  /** The answer to an accept. */
  accepted(hostId: number): Record<string, unknown>;
  decline(hostId: number, invitationId: number, userId: number, ctx: CommandContext): Promise<Position | undefined>;
}

export function inviteeOperations<Host, I extends Invitation>(deps: ApiDeps, spec: InviteeSpec<Host, I>): Operation[] {
  const pendingFor = async (userId: number) =>
    (await spec.invitingUser(userId)).flatMap((host) => (host.invitations ?? []).filter((i) => i.userId === userId).map((invitation) => ({ host, invitation })));
  const invitationOf = async (userId: number, params: Record<string, string>) => {
    const invitationId = intParam(params, 'invitationId');
    const found = (await pendingFor(userId)).find((p) => p.invitation.invitationId === invitationId);
    if (!found) throw new NotFoundError(`No pending invitation ${invitationId} for you`, 'INVITATION_NOT_FOUND');
    return found;
  };
  const answer = (operationId: string, verb: 'accept' | 'decline', summary: string) =>
    operation({
      operationId,
      method: 'post',
      path: `${spec.path}/:invitationId/${verb}`,
      summary,
      auth: 'jwt',
      async handler({ principal, params, requestId, settle }) {
        const me = signedInUser(principal);
        const { host, invitation } = await invitationOf(me.id, params);
        await settle(await spec[verb](host.id, invitation.invitationId, me.id, requestContext(principal, requestId)));
        return verb === 'accept' ? spec.accepted(host.id) : {};
      },
    });
  return [
    operation({
      operationId: spec.ids.list,
      method: 'get',
      path: spec.path,
      summary: spec.summaries.list,
      auth: 'jwt',
      async handler({ principal }) {
        const pending = await pendingFor(signedInUser(principal).id);
        const inviters = new Map((await deps.users.byIds([...new Set(pending.map((p) => p.invitation.invitedByUserId))])).map((u) => [u.id, u]));
        return {
          invitations: pending.map(({ host, invitation }) => {
            const by = inviters.get(invitation.invitedByUserId);
            return {
              id: invitation.invitationId,
              ...spec.view(host, invitation),
              invitedBy: by ? { id: by.id, username: by.username, name: by.name ?? by.username } : null,
            };
          }),
        };
      },
    }),
    answer(spec.ids.accept, 'accept', spec.summaries.accept),
    answer(spec.ids.decline, 'decline', spec.summaries.decline),
  ];
}

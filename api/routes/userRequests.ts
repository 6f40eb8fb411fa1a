// What the user routes (`/api/user/...` and `/api/users/:userId/...`) share: the user a request acts
// on, the by-id twin of a current-user operation, a user command run for a request, the throttle on
// guesses made while signed in, and mail to the support team.
import type { CommandContext } from '../../commands/commandContext';
import { supportRequestEmail } from '../../commands/users/accountMail';
import { runUserCommand } from '../../commands/users/userCommands';
import type { UserCommand } from '../../domain/user/userDecider';
import type { UserDocument } from '../../projections/users/userDocument';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { accountKey, clientAddress } from '../auth/throttleKeys';
import { refusedWithRetryAfter } from '../auth/throttleAnswers';
import { authorizeSelfOrStaff, targetUser } from '../auth/userTarget';
import type { Operation, OperationRequest } from '../http/operation';

/** Any request of a JWT-only operation, whatever its body, query and `authorize`. */
export type UserRequest = OperationRequest<unknown, unknown, 'jwt', unknown>;

/** Where the by-id twin of a current-user operation is (`/api/users/:userId...`). */
export interface UserByIdAddress {
  operationId: string;
  path: string;
}

/** Appended to the summary of an operation by id. */
export const BY_ID_SUMMARY = ' (oneself; staff may act on others)';

/**
 * The current-user operation and its twin by id: the same schemas and handler at `byId.path`,
 * for oneself or, for staff, anyone (403 otherwise, before the body is read). The handler finds
 * the user it acts on with `targetOf`.
 */
export function withTwinByUserId(staffUsernames: ReadonlySet<string>, byId: UserByIdAddress, current: Operation): Operation[] {
  if (!byId.path.includes('/:userId')) throw new Error(`${byId.operationId}: a by-id path has :userId (${byId.path})`);
  return [current, { ...current, ...byId, summary: `${current.summary}${BY_ID_SUMMARY}`, authorize: authorizeSelfOrStaff(staffUsernames) }];
}

export function userRequests(deps: ApiDeps) {
  const contextOf = (request: UserRequest): CommandContext => requestContext(request.principal, request.requestId);
  return {
    contextOf,
    /** The user of a `:userId` path (after `authorizeSelfOrStaff`; 404 when there is none), else the signed-in user. */
    targetOf(request: UserRequest): Promise<UserDocument> {
      return request.params.userId === undefined ? Promise.resolve(request.user) : targetUser(deps.users, request.principal, request.params);
    },
    /** Runs the command on the user's stream and answers once the read models have it. */
    async run(request: UserRequest, target: UserDocument, command: UserCommand): Promise<Record<string, unknown>> {
      const { appended } = await runUserCommand(deps.events, target.id, command, contextOf(request));
      if (appended) await request.settle(appended.position);
      return {};
    },
    /**
     * A signed-in session (a stolen token, say) must not guess the password, codes or TOTP tokens
     * faster than a login could: the same throttle, on the target account and the caller's address.
     */
    guarded<T>(request: UserRequest, target: UserDocument, check: () => Promise<T>): Promise<T> {
      return refusedWithRetryAfter(request.ctx, () => deps.throttle.guard({ account: accountKey(target, ''), address: clientAddress(request.ctx, deps.settings.trustedProxyHops) }, check));
    },
    /** Mails the support team about the user, and answers once the mail is recorded. */
    async mailSupport(request: UserRequest, target: UserDocument, subject: string, fields: Record<string, string | number | undefined>): Promise<Record<string, unknown>> {
      const { position } = await deps.sendEmail(supportRequestEmail(target.id, deps.settings.supportEmail, subject, fields), contextOf(request));
      await request.settle(position);
      return {};
    },
  };
}

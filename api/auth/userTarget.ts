import { ForbiddenError, NotFoundError } from '../../domain/shared/errors';
import type { UserDocument } from '../../projections/users/userDocument';
import type { UserQueries } from '../../projections/users/userQueries';
import { intParam } from '../http/operation';
import type { Principal } from './principal';
import { isStaff } from './staff';

export const signedInUser = (principal: Principal): UserDocument => {
  if (principal.kind !== 'user') throw new Error('unreachable: a JWT-only operation always has a user');
  return principal.user;
};

/** User-by-id operations act on oneself; staff may act on anyone. */
export function authorizeSelfOrStaff(staffUsernames: ReadonlySet<string>) {
  return async (principal: Principal, params: Record<string, string>): Promise<void> => {
    const me = signedInUser(principal);
    if (intParam(params, 'userId') !== me.id && !isStaff(me, staffUsernames)) throw new ForbiddenError('You can only act on your own account', 'NOT_YOURSELF');
  };
}

/** The user named by the `userId` path parameter (after `authorizeSelfOrStaff`). */
export async function targetUser(users: UserQueries, principal: Principal, params: Record<string, string>): Promise<UserDocument> {
  const me = signedInUser(principal);
  const userId = intParam(params, 'userId');
  const target = userId === me.id ? me : await users.byId(userId);
  if (!target) throw new NotFoundError(`User ${userId} not found`, 'USER_NOT_FOUND');
  return target;
}

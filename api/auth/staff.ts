import type { UserDocument } from '../../projections/users/userDocument';

/** What staff may do beyond a user's own account. */
export const STAFF_PERMISSIONS = ['users:emails:read', 'test:users:read', 'whitelabels:read'] as const;

/** The installation's first user is staff, and so is anyone the configuration names. */
export const isStaff = (user: UserDocument, staffUsernames: ReadonlySet<string>): boolean =>
  user.firstUser || staffUsernames.has(user.username.toLowerCase());

export const permissionsOf = (user: UserDocument, staffUsernames: ReadonlySet<string>): string[] =>
  isStaff(user, staffUsernames) ? [...STAFF_PERMISSIONS] : [];

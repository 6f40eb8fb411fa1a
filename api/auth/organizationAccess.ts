import type { OrganizationMemberRole } from '../../domain/organization/organizationEvents';
import { ForbiddenError, NotFoundError } from '../../domain/shared/errors';
import type { OrganizationDocument } from '../../projections/organizations/organizationDocument';
import type { OrganizationQueries } from '../../projections/organizations/organizationQueries';
import type { Principal } from './principal';
import { isStaff } from './staff';

/**
 * What an operation needs on an organization: `guest` (its own part: the info view), `read`
 * (members, member keys: info, jobs, output) or `manage` (admins, admin keys, staff: settings,
 * members, keys, cancelling jobs, deletion).
 */
export type OrganizationNeed = 'guest' | 'read' | 'manage';

const LEVEL: Record<OrganizationNeed, number> = { guest: 0, read: 1, manage: 2 };
/** The level of those who manage the organization (admins, admin keys, staff). */
export const MANAGE_LEVEL = LEVEL.manage;
const ROLE_LEVEL: Record<OrganizationMemberRole, number> = { guest: 0, member: 1, admin: 2 };

/** The caller's standing: its level, and the member it is (null for keys and staff who are not members). */
export interface OrganizationCaller {
  organization: OrganizationDocument;
  level: number;
  role: OrganizationMemberRole | null;
  userId: number | null;
  /** A guest user: sees only their own member entry and datasets. */
  isGuest: boolean;
}

/**
 * The organization, if the principal may do what `need` says on it. Staff manage every
 * organization; an organization key reaches only its own organization, a project key none; a user
 * who is not a member is refused (403) as is a member whose role is too low.
 */
export async function requireOrganization(
  deps: { organizations: Pick<OrganizationQueries, 'byId'>; settings: { staffUsernames: ReadonlySet<string> } },
  principal: Principal,
  organizationId: number,
  need: OrganizationNeed,
): Promise<OrganizationCaller> {
  const organization = await deps.organizations.byId(organizationId);
  if (!organization) throw new NotFoundError(`Organization ${organizationId} not found`, 'ORGANIZATION_NOT_FOUND');
  let caller: OrganizationCaller;
  if (principal.kind === 'apiKey') throw new ForbiddenError(`A project API key does not give access to organization ${organizationId}`);
  if (principal.kind === 'organizationKey') {
    if (principal.organizationId !== organizationId) throw new ForbiddenError(`This API key does not give access to organization ${organizationId}`);
    caller = { organization, level: ROLE_LEVEL[principal.role], role: principal.role, userId: null, isGuest: false };
  } else {
    const member = organization.members.find((m) => m.userId === principal.user.id);
    if (isStaff(principal.user, deps.settings.staffUsernames)) caller = { organization, level: LEVEL.manage, role: member?.role ?? null, userId: principal.user.id, isGuest: false };
    else if (!member) throw new ForbiddenError(`You are not a member of organization ${organizationId}`);
    else caller = { organization, level: ROLE_LEVEL[member.role], role: member.role, userId: principal.user.id, isGuest: member.role === 'guest' };
  }
  if (caller.level < LEVEL[need]) {
    throw new ForbiddenError(need === 'manage' ? 'Only admins of the organization can do this' : 'Guests of an organization see only its information and their own datasets');
  }
  return caller;
}

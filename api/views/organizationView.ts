import type { OrganizationApiKeyDocument, OrganizationDocument } from '../../projections/organizations/organizationDocument';
import { organizationReadmeHtml } from './organizationReadme';
import type { UserDocument } from '../../projections/users/userDocument';
import type { WhitelabelQueries } from '../../projections/whitelabels/whitelabelQueries';
import { collaboratorView } from './projectView';

/** The white label an organization belongs to. */
export interface WhitelabelRef {
  id: number;
  name: string;
}

/**
 * The white label each organization belongs to: the one it owns (`ownerOrganizationId`), the lowest
 * id if it owns several; none once that white label is deleted.
 */
export async function whitelabelsOfOrganizations(deps: { whitelabels: Pick<WhitelabelQueries, 'ownedBy'> }, organizationIds: readonly number[]): Promise<Map<number, WhitelabelRef>> {
  const owned = new Map<number, WhitelabelRef>();
  for (const w of await deps.whitelabels.ownedBy(organizationIds)) if (!owned.has(w.ownerOrganizationId)) owned.set(w.ownerOrganizationId, { id: w.id, name: w.name });
  return owned;
}

/** Listings of organizations (UserOrganization) as `userId` sees them, with their white labels. */
export async function organizationViews(deps: { whitelabels: Pick<WhitelabelQueries, 'ownedBy'> }, organizations: readonly OrganizationDocument[], userId: number | null): Promise<Record<string, unknown>[]> {
  const whitelabels = await whitelabelsOfOrganizations(deps, organizations.map((o) => o.id));
  return organizations.map((o) => organizationView(o, userId, whitelabels.get(o.id) ?? null));
}

/** The SDK's Organization / UserOrganization for listings (`users` is filled only by the info view). */
export function organizationView(o: OrganizationDocument, userId: number | null, whitelabel: WhitelabelRef | null = null): Record<string, unknown> {
  const member = userId === null ? undefined : o.members.find((m) => m.userId === userId);
  return {
    id: o.id,
    name: o.name,
    isDeveloperProfile: o.isDeveloperProfile,
    whitelabelId: whitelabel?.id ?? null,
    ...(whitelabel ? { whitelabelName: whitelabel.name } : {}),
    isAdmin: member?.role === 'admin',
    created: o.created,
    trialId: o.trialId,
    trialExpiredDate: null,
    trialUpgradedDate: null,
    entitlementLimits: {},
    userCount: o.members.length,
    adminCount: o.members.filter((m) => m.role === 'admin').length,
    privateProjectCount: 0,
    publicProjectLicense: { name: 'Apache-2.0', link: 'https://www.apache.org/licenses/LICENSE-2.0' },
    showHeaderImgMask: o.showHeaderImgMask,
    users: [],
  };
}

/**
 * What a caller sees of an organization: everything (members, staff), a guest's own part of it, or,
 * for an API key, who the members are without their e-mail and profile (as project keys see collaborators).
 */
export type OrganizationAudience = { kind: 'full' } | { kind: 'guest'; userId: number } | { kind: 'apiKey' };

export interface OrganizationInfoContext {
  users: ReadonlyMap<number, UserDocument>;
  staffUsernames: ReadonlySet<string>;
  publicUrl: string;
  audience: OrganizationAudience;
  whitelabel: WhitelabelRef | null;
  /** Pending invitations are shown to those who may withdraw them: signed-in admins and staff. */
  showInvitations: boolean;
}

/**
 * Invitations not answered yet: what the admin typed and offered, never the invitee's profile or
 * id (an invitation to a name no account has reads the same). Forgotten names are left out.
 */
export function memberInvitationsView(o: OrganizationDocument, users: ReadonlyMap<number, UserDocument>): Record<string, unknown>[] {
  return (o.invitations ?? []).flatMap((i) => {
    if (i.invitedAs === null) return [];
    const by = users.get(i.invitedByUserId);
    return [{ id: i.invitationId, usernameOrEmail: i.invitedAs, role: i.role, datasets: i.datasets, invited: i.invited, ...(by ? { invitedBy: { id: by.id, username: by.username } } : {}) }];
  });
}

/**
 * OrganizationInfoResponse without `success`: the members as `organization.users` with their role
 * and datasets. A guest sees only themselves among the members. No dataset storage exists here, so
 * `datasets` is empty for everyone (a guest's own dataset names are in their member entry).
 */
export function organizationInfoView(o: OrganizationDocument, c: OrganizationInfoContext): Record<string, unknown> {
  const members = c.audience.kind === 'guest' ? o.members.filter((m) => m.userId === (c.audience as { userId: number }).userId) : o.members;
  const users = members.flatMap((m) => {
    const u = c.users.get(m.userId);
    if (!u) return [];
    return [{ ...collaboratorView(u, c.audience.kind === 'apiKey' ? 'apiKey' : 'collaborator', c), added: m.added, role: m.role, projectCount: 0, datasets: m.datasets }];
  });
  return {
    organization: { ...organizationView(o, null, c.whitelabel), users },
    ...(c.whitelabel ? { whitelabelId: c.whitelabel.id } : {}),
    ...(c.showInvitations ? { memberInvitations: memberInvitationsView(o, c.users) } : {}),
    datasets: [],
    defaultComputeLimits: { requestsCpu: 1, requestsMemory: 2048, limitsCpu: 2, limitsMemory: 4096 },
    experiments: o.experiments.map((type) => ({ type, title: type, enabled: true, showToUser: true })),
    ...(o.readme ? { readme: { markdown: o.readme, html: organizationReadmeHtml(o.readme) } } : {}),
    cliLists: {
      objectDetectionLastLayerOptions: [],
      imageInputScalingOptions: [
        { label: 'Pixels ranging 0..1 (not normalized)', value: '0..1' },
        { label: 'Pixels ranging 0..255 (not normalized)', value: '0..255' },
      ],
    },
    performance: { jobLimitM: 60 },
  };
}

const truncated = (value: string): string => `${value.slice(0, 10)}...`;

/** One listed organization API key: never the key itself. */
export function organizationApiKeyView(k: OrganizationApiKeyDocument, creators: ReadonlyMap<number, UserDocument>): Record<string, unknown> {
  const creator = k.createdByUserId === null ? undefined : creators.get(k.createdByUserId);
  return {
    id: k.apiKeyId,
    apiKey: truncated(k.keyHint),
    name: k.name,
    created: k.created,
    role: k.role,
    isTransformationJobKey: false,
    ...(creator ? { createdByUser: { id: creator.id, name: creator.name ?? creator.username, username: creator.username } } : {}),
    ...(k.expires ? { expires: k.expires } : {}),
  };
}

import type { TrialDocument, UserDocument } from '../../projections/users/userDocument';
import { isStaff, permissionsOf } from '../auth/staff';

/** The official agreements a user can accept (GetUserResponse.eulas). */
export const EULAS = [
  { name: 'brainchip', description: 'BrainChip Akida end user license agreement', latestVersion: '2023-01', link: 'https://brainchip.com/eula' },
  { name: 'syntiant', description: 'Syntiant end user license agreement', latestVersion: '2022-08', link: 'https://www.syntiant.com/eula' },
] as const;

/** The experiments a user can switch on with updateCurrentUser. */
export const USER_EXPERIMENTS = [
  { type: 'new-data-explorer', title: 'New data explorer', help: 'Try the redesigned data explorer' },
  { type: 'dark-mode', title: 'Dark mode', help: 'A dark theme for the studio' },
] as const;

/** Notifications shown to every user until dismissed. */
export const USER_NOTIFICATIONS = ['welcome', 'activate-account'] as const;

/** Where a user's photo is served (GET /v1/user-photos/:sha256). */
export const photoUrl = (publicUrl: string, sha256: string): string => `${publicUrl}/v1/user-photos/${sha256}`;

/** The SDK's User: the fields every user answer shares. */
export function userView(u: UserDocument, staffUsernames: ReadonlySet<string>, publicUrl: string): Record<string, unknown> {
  return {
    id: u.id,
    username: u.username,
    name: u.name ?? u.username,
    email: u.email ?? '',
    photo: u.photo ? photoUrl(publicUrl, u.photo) : undefined,
    created: u.created,
    lastSeen: u.lastSeen ?? undefined,
    staffInfo: { isStaff: isStaff(u, staffUsernames), hasSudoRights: false },
    pending: u.pending,
    jobTitle: u.jobTitle ?? undefined,
    companyName: u.companyName ?? undefined,
    permissions: permissionsOf(u, staffUsernames),
    activated: u.activated,
    mfaConfigured: u.mfaConfigured,
    tier: u.tier,
    idps: [],
  };
}

export function trialView(t: TrialDocument): Record<string, unknown> {
  return {
    id: t.id,
    userId: t.userId,
    organizationId: t.organizationId,
    created: t.created,
    expirationDate: t.expirationDate,
    notes: t.notes ?? undefined,
    expiredDate: t.expiredDate,
    deletedDate: t.deletedDate,
    upgradedDate: t.upgradedDate,
  };
}

export interface UserViewContext {
  staffUsernames: ReadonlySet<string>;
  publicUrl: string;
  projects: Record<string, unknown>[];
  organizations: Record<string, unknown>[];
  /** The white labels of the user's organizations (GetUserResponse.whitelabels). */
  whitelabels: { id: number; domain: string; name: string; ownerOrganizationId: number; isAdmin: boolean }[];
  trials: TrialDocument[];
  now: Date;
}

/** GetUserResponse (without `success`): the user, their projects and account state. */
export function getUserView(u: UserDocument, c: UserViewContext): Record<string, unknown> {
  const s = u.subscription;
  const activeTrial = c.trials.find((t) => t.expiredDate === null && t.deletedDate === null && Date.parse(t.expirationDate) > c.now.getTime());
  return {
    ...userView(u, c.staffUsernames, c.publicUrl),
    organizations: c.organizations,
    projects: c.projects,
    experiments: USER_EXPERIMENTS.map((e) => ({ ...e, enabled: u.experiments.includes(e.type), showToUser: true })),
    evaluation: false,
    ambassador: false,
    whitelabels: c.whitelabels,
    suspended: u.suspended,
    notifications: USER_NOTIFICATIONS.filter((n) => !u.dismissedNotifications.includes(n) && !(n === 'activate-account' && u.activated)),
    subscriptionCancellationRequestDate: s.cancellationRequestDate ?? undefined,
    subscriptionDowngradeDate: s.status === 'cancellation-pending' || s.status === 'canceled' ? (s.terminationDate ?? undefined) : undefined,
    subscriptionTerminationDate: s.terminationDate ?? undefined,
    passwordConfigured: u.passwordConfigured,
    projectsSortOrder: u.projectsSortOrder,
    activeEnterpriseTrial: activeTrial ? trialView(activeTrial) : undefined,
    hasEnterpriseFeaturesAccess: activeTrial !== undefined,
    timezone: u.timezone ?? undefined,
    lastAccessedProjects: {
      projects: c.projects.slice(0, 5).map((p) => ({ id: p.id, name: p.name, created: p.created })),
      hasMoreProjects: c.projects.length > 5,
    },
    privatePersonalProjectsUsed: c.projects.filter((p) => p.isPublic === false).length,
    lastAcceptedTermsOfService: u.lastAcceptedTermsOfService ?? undefined,
    eulas: EULAS.map((e) => ({
      ...e,
      acceptedVersion: u.eulas[e.name],
      userIsCompliant: u.eulas[e.name] === e.latestVersion,
    })),
  };
}

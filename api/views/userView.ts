import type { UserDocument } from '../../projections/users/userDocument';

/** The SDK's User: the fields every user answer shares. */
export function userView(u: UserDocument): Record<string, unknown> {
  return {
    id: u.id,
    username: u.username,
    name: u.name ?? u.username,
    email: u.email ?? '',
    created: u.created,
    staffInfo: { isStaff: false, hasSudoRights: false },
    pending: u.pending,
    jobTitle: u.jobTitle ?? undefined,
    companyName: u.companyName ?? undefined,
    permissions: [],
    activated: u.activated,
    mfaConfigured: u.mfaConfigured,
    tier: u.tier,
    idps: [],
  };
}

/** GetUserResponse (without `success`): the user, their projects and account state. */
export function getUserView(u: UserDocument, projects: Record<string, unknown>[]): Record<string, unknown> {
  return {
    ...userView(u),
    organizations: [],
    projects,
    experiments: [],
    evaluation: false,
    ambassador: false,
    whitelabels: [],
    suspended: u.suspended,
    notifications: [],
    passwordConfigured: u.passwordConfigured,
    projectsSortOrder: 'created-desc',
    hasEnterpriseFeaturesAccess: false,
    lastAccessedProjects: {
      projects: projects.slice(0, 5).map((p) => ({ id: p.id, name: p.name, created: p.created })),
      hasMoreProjects: projects.length > 5,
    },
    privatePersonalProjectsUsed: projects.filter((p) => p.isPublic === false).length,
    eulas: [],
  };
}

// The user's profile (`/api/user`, `/api/users/:userId`): reading it with their projects and
// organizations, changing and deleting it, the agreements they accept, and what staff read about them.
import { z } from 'zod';
import { deleteUser } from '../../commands/users/deleteUser';
import { ForbiddenError, ValidationError } from '../../domain/shared/errors';
import { PROJECTS_SORT_ORDERS } from '../../domain/user/userEvents';
import type { ApiDeps } from '../apiDeps';
import { isStaff } from '../auth/staff';
import { operation, queryBoolean, type Operation } from '../http/operation';
import { projectViews } from '../views/projectView';
import { organizationViews } from '../views/organizationView';
import { EULAS, USER_EXPERIMENTS, getUserView } from '../views/userView';
import { userRequests, withTwinByUserId } from './userRequests';

export const TERMS_VERSION = '2026-01-28';

/** JWT only. By id, a user acts on themselves; a staff user may act on others; anyone else gets 403. */
export function userProfileOperations(deps: ApiDeps): Operation[] {
  const { targetOf, run, guarded, contextOf } = userRequests(deps);
  const twin = (operationId: string, path: string, current: Operation) => withTwinByUserId(deps.settings.staffUsernames, { operationId, path }, current);
  return [
    // Before getUser: `/api/users/buckets` must not be taken for `/api/users/:userId`.
    ...twin(
      'listOrganizationBucketsUser',
      '/api/users/:userId/buckets',
      operation({
        operationId: 'listOrganizationBucketsCurrentUser',
        method: 'get',
        path: '/api/users/buckets',
        summary: 'Organizational storage buckets the user can access',
        auth: 'jwt',
        async handler() {
          // No organization has storage buckets yet.
          return { buckets: [] };
        },
      }),
    ),
    ...twin(
      'getUser',
      '/api/users/:userId',
      operation({
        operationId: 'getCurrentUser',
        method: 'get',
        path: '/api/user',
        summary: 'A user, with their projects and organizations',
        auth: 'jwt',
        oauthScope: 'user:read',
        query: z.object({ excludeProjects: queryBoolean.optional() }),
        // Read models alone (a trial's end is compared with the clock, kept at most a second).
        keepAnswer: () => true,
        async handler(request) {
          const target = await targetOf(request);
          const projects = request.query.excludeProjects ? [] : await projectViews(deps, await deps.projects.forCollaborator(target.id));
          const memberships = await deps.organizations.forMember(target.id);
          const organizations = await organizationViews(deps, memberships, target.id);
          // The white labels the user's organizations own; admin of the owner organization, admin of the white label.
          const whitelabels = (await deps.whitelabels.ownedBy(memberships.map((o) => o.id))).map((w) => ({
            id: w.id,
            domain: w.domain,
            name: w.name,
            ownerOrganizationId: w.ownerOrganizationId,
            isAdmin: memberships.some((o) => o.id === w.ownerOrganizationId && o.members.some((m) => m.userId === target.id && m.role === 'admin')),
          }));
          return getUserView(target, { ...deps.settings, projects, organizations, whitelabels, trials: await deps.users.trials(target.id), now: new Date() });
        },
      }),
    ),
    operation({
      operationId: 'getCurrentUserProjects',
      method: 'get',
      path: '/api/user/projects',
      summary: "The current user's projects",
      auth: 'jwt',
      oauthScope: 'projects:read',
      keepAnswer: () => true,
      async handler({ user }) {
        return { projects: await projectViews(deps, await deps.projects.forCollaborator(user.id)) };
      },
    }),
    ...twin(
      'updateUser',
      '/api/users/:userId',
      operation({
        operationId: 'updateCurrentUser',
        method: 'post',
        path: '/api/user',
        summary: 'Update the profile',
        auth: 'jwt',
        body: z.object({
          name: z.string().min(1).max(256).optional(),
          jobTitle: z.string().max(256).optional(),
          companyName: z.string().max(256).optional(),
          experiments: z.array(z.enum(USER_EXPERIMENTS.map((e) => e.type) as [string, ...string[]])).max(32).optional(),
          projectsSortOrder: z.enum(PROJECTS_SORT_ORDERS).optional(),
          timezone: z.string().max(64).optional(),
        }),
        async handler(request) {
          const target = await targetOf(request);
          const b = request.body;
          if (b.timezone !== undefined && !isTimeZone(b.timezone)) throw new ValidationError(`Unknown time zone "${b.timezone}"`);
          const changes = Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined));
          return run(request, target, { type: 'UpdateProfile', data: { ...changes, now: new Date() } });
        },
      }),
    ),
    ...twin(
      'deleteUser',
      '/api/users/:userId',
      operation({
        operationId: 'deleteCurrentUser',
        method: 'delete',
        path: '/api/user',
        summary: 'Delete the account (only your own): needs the password, and a TOTP token with MFA',
        auth: 'jwt',
        body: z.object({ password: z.string().max(1024).optional(), totpToken: z.string().max(64).optional() }),
        async handler(request) {
          const target = await targetOf(request);
          if (request.user.id !== target.id) throw new ForbiddenError('Only the current user can be deleted', 'NOT_YOURSELF');
          const { position } = await guarded(request, target, () =>
            deleteUser(deps, { userId: target.id, username: target.username, email: target.email, password: request.body.password, totpToken: request.body.totpToken }, contextOf(request)),
          );
          await request.settle(position);
          // Blobs are addressed by content: another user may have the very same picture.
          if (target.photo && !(await deps.users.byPhoto(target.photo)) && !(await deps.samples.referencesBlob(target.photo))) await deps.blobs.delete(target.photo);
          return {};
        },
      }),
    ),
    operation({
      operationId: 'convertCurrentUser',
      method: 'post',
      path: '/api/user/convert',
      summary: 'Convert an evaluation account to a regular account',
      auth: 'jwt',
      body: z.object({ name: z.string(), username: z.string(), email: z.string(), password: z.string(), projectName: z.string().optional(), privacyPolicy: z.boolean(), turnstileResponse: z.string() }),
      async handler() {
        throw new ValidationError('This is not an evaluation account: there is nothing to convert', 'NOT_EVALUATION');
      },
    }),
    ...twin(
      'listEmailsUser',
      '/api/users/:userId/emails',
      operation({
        operationId: 'listEmailsCurrentUser',
        method: 'get',
        path: '/api/user/emails',
        summary: 'The e-mails the service sent to the user (permission users:emails:read)',
        auth: 'jwt',
        async handler(request) {
          const target = await targetOf(request);
          if (!isStaff(request.user, deps.settings.staffUsernames)) {
            throw new ForbiddenError('Listing e-mails needs the users:emails:read permission', 'MISSING_PERMISSION');
          }
          // Mail about the user to the support team is theirs too (sealed with their key), but not sent to them.
          const emails = (await deps.emails.forUser(target.id)).filter((e) => e.to?.toLowerCase() === target.emailLower);
          return {
            emails: emails.map((e) => ({
              userId: e.userId ?? undefined,
              projectId: e.projectId ?? undefined,
              from: e.from,
              to: e.to,
              created: e.created,
              subject: e.subject,
              bodyText: e.bodyText,
              bodyHTML: e.bodyHTML,
              sent: e.sent,
              providerResponse: e.providerResponse,
            })),
          };
        },
      }),
    ),
    operation({
      operationId: 'acceptTermsOfService',
      method: 'post',
      path: '/api/user/accept-tos',
      summary: 'Accept the current terms of service',
      auth: 'jwt',
      handler: (request) => run(request, request.user, { type: 'AcceptTermsOfService', data: { version: TERMS_VERSION, now: new Date() } }),
    }),
    operation({
      operationId: 'acceptEula',
      method: 'post',
      path: '/api/user/accept-eula',
      summary: 'Accept a license agreement',
      auth: 'jwt',
      body: z.object({ name: z.enum(['brainchip', 'syntiant']) }),
      async handler(request) {
        const eula = EULAS.find((e) => e.name === request.body.name)!;
        return run(request, request.user, { type: 'AcceptEula', data: { name: eula.name, version: eula.latestVersion, now: new Date() } });
      },
    }),
    operation({
      operationId: 'userDismissNotification',
      method: 'post',
      path: '/api/user/dismiss-notification',
      summary: 'Dismiss a notification',
      auth: 'jwt',
      body: z.object({ notification: z.string().min(1).max(128) }),
      async handler(request) {
        if (request.user.dismissedNotifications.includes(request.body.notification)) return {};
        return run(request, request.user, { type: 'DismissNotification', data: { notification: request.body.notification, now: new Date() } });
      },
    }),
  ];
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

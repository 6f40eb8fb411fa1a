import { z } from 'zod';
import type { CommandContext } from '../../commands/commandContext';
import { hashPassword, verifyPassword } from '../../commands/passwords';
import { activationEmail, senderOf, supportRequestEmail } from '../../commands/users/accountMail';
import { deleteUser } from '../../commands/users/deleteUser';
import { ACTIVATION_CODE_LIFETIME_MS, hashCode, newCode } from '../../commands/users/secrets';
import { startCheckout } from '../../commands/users/subscriptions';
import { matchTotp, newRecoveryCodes, newTotpKey, totpUrl } from '../../commands/users/totp';
import { loadUser, runUserCommand } from '../../commands/users/userCommands';
import { createDeveloperProfile, startEnterpriseTrial } from '../../commands/users/userOrganizations';
import { ForbiddenError, ValidationError } from '../../domain/shared/errors';
import type { UserCommand } from '../../domain/user/userDecider';
import { PROJECTS_SORT_ORDERS } from '../../domain/user/userEvents';
import type { UserDocument } from '../../projections/users/userDocument';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { accountKey, clientAddress } from '../auth/throttleKeys';
import { TooManyAttemptsError } from '../auth/loginThrottle';
import { refuse, refusedWithRetryAfter } from '../auth/throttleAnswers';
import { isStaff } from '../auth/staff';
import { authorizeSelfOrStaff, signedInUser, targetUser } from '../auth/userTarget';
import { operation, queryBoolean, type Operation, type OperationRequest } from '../http/operation';
import { projectViews } from '../views/projectView';
import { organizationViews } from '../views/organizationView';
import { EULAS, USER_EXPERIMENTS, getUserView, trialView } from '../views/userView';
import { Password } from './accountRoutes';
import { EnterpriseUpgradeOrTrialExtensionRequest } from './organizationRoutes';

type Request = OperationRequest<unknown, unknown, 'jwt'>;

interface UserOperationSpec<B extends z.ZodType = z.ZodType> {
  /** Operation id and path for the current user (`/api/user/...`). */
  current?: { operationId: string; path: string };
  /** Operation id and path by id (`/api/users/:userId/...`): oneself, or anyone for staff. */
  byId?: { operationId: string; path: string };
  method: 'get' | 'post' | 'delete';
  summary: string;
  body?: B;
  query?: z.ZodType;
  /** As `Operation.keepAnswer`: the answer is made of the user's read models alone (and the clock to the second). */
  keepAnswer?: () => boolean;
  handler(target: UserDocument, request: OperationRequest<z.infer<B>, Record<string, unknown>, 'jwt'>): Promise<Record<string, unknown>>;
}

/** Infers each operation's body type from its schema. */
const userOp = <B extends z.ZodType = z.ZodUndefined>(spec: UserOperationSpec<B>): UserOperationSpec => spec as unknown as UserOperationSpec;

/**
 * Current-user and user-by-id operations. All take a JWT only. By id, a user acts on themselves; a
 * staff user may act on others; anyone else gets 403.
 */
export function currentUserOperations(deps: ApiDeps): Operation[] {
  const ctxOf = (request: Request): CommandContext => requestContext(request.principal, request.requestId);
  const run = async (request: Request, target: UserDocument, command: UserCommand): Promise<Record<string, unknown>> => {
    const { appended } = await runUserCommand(deps.events, target.id, command, ctxOf(request));
    if (appended) await request.settle(appended.position);
    return {};
  };
  const now = () => new Date();
  // A signed-in session (a stolen token, say) must not guess the password, codes or TOTP tokens
  // faster than a login could: the same throttle, on the target account and the caller's address.
  const guarded = <T>(request: Request, target: UserDocument, check: () => Promise<T>): Promise<T> =>
    refusedWithRetryAfter(request.ctx, () => deps.throttle.guard({ account: accountKey(target, ''), address: clientAddress(request.ctx, deps.settings.trustedProxyHops) }, check));
  const mailSupport = async (request: Request, target: UserDocument, subject: string, fields: Record<string, string | number | undefined>) => {
    const { position } = await deps.sendEmail(supportRequestEmail(target.id, deps.settings.supportEmail, subject, fields), ctxOf(request));
    await request.settle(position);
    return {};
  };

  const specs: UserOperationSpec[] = [
    userOp({
      current: { operationId: 'getCurrentUser', path: '/api/user' },
      byId: { operationId: 'getUser', path: '/api/users/:userId' },
      method: 'get',
      summary: 'A user, with their projects and organizations',
      query: z.object({ excludeProjects: queryBoolean.optional() }),
      // Read models alone (a trial's end is compared with the clock, kept at most a second).
      keepAnswer: () => true,
      async handler(target, { query }) {
        const projects = query.excludeProjects ? [] : await projectViews(deps, await deps.projects.forCollaborator(target.id));
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
        return getUserView(target, { ...deps.settings, projects, organizations, whitelabels, trials: await deps.users.trials(target.id), now: now() });
      },
    }),
    userOp({
      current: { operationId: 'getCurrentUserProjects', path: '/api/user/projects' },
      method: 'get',
      summary: "The current user's projects",
      keepAnswer: () => true,
      async handler(target) {
        return { projects: await projectViews(deps, await deps.projects.forCollaborator(target.id)) };
      },
    }),
    userOp({
      current: { operationId: 'updateCurrentUser', path: '/api/user' },
      byId: { operationId: 'updateUser', path: '/api/users/:userId' },
      method: 'post',
      summary: 'Update the profile',
      body: z.object({
        name: z.string().min(1).max(256).optional(),
        jobTitle: z.string().max(256).optional(),
        companyName: z.string().max(256).optional(),
        experiments: z.array(z.enum(USER_EXPERIMENTS.map((e) => e.type) as [string, ...string[]])).max(32).optional(),
        projectsSortOrder: z.enum(PROJECTS_SORT_ORDERS).optional(),
        timezone: z.string().max(64).optional(),
      }),
      async handler(target, request) {
        const b = request.body;
        if (b.timezone !== undefined && !isTimeZone(b.timezone)) throw new ValidationError(`Unknown time zone "${b.timezone}"`);
        const changes = Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined));
        return run(request as Request, target, { type: 'UpdateProfile', data: { ...changes, now: now() } });
      },
    }),
    userOp({
      current: { operationId: 'deleteCurrentUser', path: '/api/user' },
      byId: { operationId: 'deleteUser', path: '/api/users/:userId' },
      method: 'delete',
      summary: 'Delete the account (only your own): needs the password, and a TOTP token with MFA',
      body: z.object({ password: z.string().max(1024).optional(), totpToken: z.string().max(64).optional() }),
      async handler(target, request) {
        if (signedInUser(request.principal).id !== target.id) throw new ForbiddenError('Only the current user can be deleted', 'NOT_YOURSELF');
        const { position } = await guarded(request as Request, target, () =>
          deleteUser(
            deps,
            { userId: target.id, username: target.username, email: target.email, password: request.body.password, totpToken: request.body.totpToken },
            ctxOf(request as Request),
          ),
        );
        await request.settle(position);
        // Blobs are addressed by content: another user may have the very same picture.
        if (target.photo && !(await deps.users.byPhoto(target.photo)) && !(await deps.samples.referencesBlob(target.photo))) await deps.blobs.delete(target.photo);
        return {};
      },
    }),
    userOp({
      current: { operationId: 'convertCurrentUser', path: '/api/user/convert' },
      method: 'post',
      summary: 'Convert an evaluation account to a regular account',
      body: z.object({ name: z.string(), username: z.string(), email: z.string(), password: z.string(), projectName: z.string().optional(), privacyPolicy: z.boolean(), turnstileResponse: z.string() }),
      async handler() {
        throw new ValidationError('This is not an evaluation account: there is nothing to convert', 'NOT_EVALUATION');
      },
    }),
    userOp({
      current: { operationId: 'activateCurrentUser', path: '/api/user/activate' },
      byId: { operationId: 'activateUser', path: '/api/users/:userId/activate' },
      method: 'post',
      summary: 'Activate the account with the code from the activation e-mail',
      body: z.object({ code: z.string().min(1).max(64) }),
      async handler(target, request) {
        return guarded(request as Request, target, () => run(request as Request, target, { type: 'ActivateUser', data: { codeHash: hashCode(request.body.code), now: now() } }));
      },
    }),
    userOp({
      current: { operationId: 'requestActivationCodeCurrentUser', path: '/api/user/request-activation' },
      byId: { operationId: 'requestActivationCodeUser', path: '/api/users/:userId/request-activation' },
      method: 'post',
      summary: 'E-mail a fresh activation code; the earlier one stops working',
      async handler(target, request) {
        if (!target.email) throw new ValidationError('This account has no e-mail address');
        // The caller is signed in and asks for their own mail, so a 429 tells nothing new; sending
        // every time would let a stolen session flood the owner's mailbox.
        const admitted = refusedWithRetryAfter(request.ctx, () => deps.resetRequests.admit({ account: accountKey(target, ''), address: clientAddress(request.ctx, deps.settings.trustedProxyHops) }));
        if (!admitted.send) refuse(request.ctx, new TooManyAttemptsError(admitted.retryAfterSeconds, 'e-mails with a code'));
        const code = newCode();
        const ctx = ctxOf(request as Request);
        const { appended } = await runUserCommand(
          deps.events,
          target.id,
          { type: 'IssueActivationCode', data: { codeHash: hashCode(code), expires: new Date(ctx.now.getTime() + ACTIVATION_CODE_LIFETIME_MS), now: ctx.now } },
          ctx,
        );
        const mail = await deps.sendEmail(activationEmail(target.id, target.email, target.name ?? target.username, code), ctx);
        await request.settle(mail.position > appended!.position ? mail.position : appended!.position);
        return {};
      },
    }),
    userOp({
      current: { operationId: 'createDeveloperProfile', path: '/api/user/create-developer-profile' },
      method: 'post',
      summary: "Create the user's personal organization",
      async handler(target, request) {
        const { organizationId, position } = await createDeveloperProfile(deps, target, ctxOf(request as Request));
        await request.settle(position);
        return { organizationId };
      },
    }),
    userOp({
      current: { operationId: 'startEnterpriseTrial', path: '/api/user/trial' },
      method: 'post',
      summary: 'Start an enterprise trial with its organization (once per user)',
      body: z.object({
        email: z.string().optional(),
        name: z.string().optional(),
        organizationName: z.string().min(1).max(128).optional(),
        expirationDate: z.iso.datetime({ offset: true }).optional(),
        notes: z.string().max(2000).optional(),
        useCase: z.string().optional(),
        userHasMLModelsInProduction: z.enum(['yes', 'no', 'no, but we will soon']).optional(),
        companyName: z.string().optional(),
        companySize: z.string().optional(),
        country: z.string().optional(),
        stateOrProvince: z.string().optional(),
        redirectUrlOrigin: z.string().optional(),
        redirectUrlQueryParams: z.string().optional(),
      }),
      async handler(target, request) {
        const b = request.body;
        const { organizationId, position } = await startEnterpriseTrial(
          deps,
          target,
          { organizationName: b.organizationName ?? null, expirationDate: b.expirationDate ? new Date(b.expirationDate) : null, notes: b.notes ?? null },
          ctxOf(request as Request),
        );
        await request.settle(position);
        await mailSupport(request as Request, target, `Enterprise trial started by ${target.username}`, {
          From: senderOf(target),
          Organization: organizationId,
          'Use case': b.useCase,
          'ML models in production': b.userHasMLModelsInProduction,
          Company: b.companyName,
          'Company size': b.companySize,
          Country: b.country,
        });
        return { id: organizationId, userId: target.id };
      },
    }),
    userOp({
      byId: { operationId: 'listEnterpriseTrialsUser', path: '/api/users/:userId/trials' },
      method: 'get',
      summary: "A user's enterprise trials",
      async handler(target) {
        return { trials: (await deps.users.trials(target.id)).map(trialView) };
      },
    }),
    userOp({
      current: { operationId: 'listEmailsCurrentUser', path: '/api/user/emails' },
      byId: { operationId: 'listEmailsUser', path: '/api/users/:userId/emails' },
      method: 'get',
      summary: 'The e-mails the service sent to the user (permission users:emails:read)',
      async handler(target, request) {
        if (!isStaff(signedInUser(request.principal), deps.settings.staffUsernames)) {
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
    userOp({
      byId: { operationId: 'sendUserFeedback', path: '/api/users/:userId/feedback' },
      method: 'post',
      summary: 'Send feedback to the support team',
      body: z.object({
        type: z.literal('feedback'),
        subject: z.string().min(1).max(500),
        body: z.string().min(1).max(20_000),
        workEmail: z.string().max(256).optional(),
        company: z.string().max(256).optional(),
        jobTitle: z.string().max(256).optional(),
        companySize: z.string().max(64).optional(),
        organizationId: z.number().int().optional(),
      }),
      async handler(target, request) {
        const b = request.body;
        return mailSupport(request as Request, target, `Feedback: ${b.subject}`, {
          From: senderOf(target),
          'Reply to': b.workEmail ?? target.email ?? undefined,
          Company: b.company,
          'Job title': b.jobTitle,
          'Company size': b.companySize,
          Organization: b.organizationId,
          Message: b.body,
        });
      },
    }),
    userOp({
      byId: { operationId: 'sendUserUpgradeRequest', path: '/api/users/:userId/upgrade' },
      method: 'post',
      summary: 'Ask the support team for an upgrade to enterprise',
      body: EnterpriseUpgradeOrTrialExtensionRequest,
      async handler(target, request) {
        const b = request.body;
        return mailSupport(request as Request, target, `Enterprise upgrade request from ${target.username}`, {
          From: senderOf(target),
          'Reply to': target.email ?? undefined,
          Reason: b.reason,
          'Use case': b.useCase,
          Timeline: b.timeline,
          Objective: b.objective,
          Trial: b.trialId,
        });
      },
    }),
    userOp({
      current: { operationId: 'changePasswordCurrentUser', path: '/api/user/change-password' },
      byId: { operationId: 'changePasswordUser', path: '/api/users/:userId/change-password' },
      method: 'post',
      summary: 'Change the password; every earlier session ends',
      body: z.object({ currentPassword: z.string().min(1).max(1024), newPassword: Password }),
      async handler(target, request) {
        if (signedInUser(request.principal).id !== target.id) throw new ForbiddenError('Only the user can change their own password', 'NOT_YOURSELF');
        return guarded(request as Request, target, async () => {
          const state = await loadUser(deps.events, target.id);
          const currentPasswordOk = state.status === 'registered' && state.passwordHash !== null && (await verifyPassword(request.body.currentPassword, state.passwordHash));
          return run(request as Request, target, { type: 'ChangePassword', data: { currentPasswordOk, passwordHash: await hashPassword(request.body.newPassword), now: now() } });
        });
      },
    }),
    userOp({
      current: { operationId: 'listOrganizationBucketsCurrentUser', path: '/api/users/buckets' },
      byId: { operationId: 'listOrganizationBucketsUser', path: '/api/users/:userId/buckets' },
      method: 'get',
      summary: 'Organizational storage buckets the user can access',
      async handler() {
        // No organization has storage buckets yet.
        return { buckets: [] };
      },
    }),
    userOp({
      current: { operationId: 'acceptTermsOfService', path: '/api/user/accept-tos' },
      method: 'post',
      summary: 'Accept the current terms of service',
      async handler(target, request) {
        return run(request as Request, target, { type: 'AcceptTermsOfService', data: { version: TERMS_VERSION, now: now() } });
      },
    }),
    userOp({
      current: { operationId: 'acceptEula', path: '/api/user/accept-eula' },
      method: 'post',
      summary: 'Accept a license agreement',
      body: z.object({ name: z.enum(['brainchip', 'syntiant']) }),
      async handler(target, request) {
        const eula = EULAS.find((e) => e.name === request.body.name)!;
        return run(request as Request, target, { type: 'AcceptEula', data: { name: eula.name, version: eula.latestVersion, now: now() } });
      },
    }),
    userOp({
      current: { operationId: 'userDismissNotification', path: '/api/user/dismiss-notification' },
      method: 'post',
      summary: 'Dismiss a notification',
      body: z.object({ notification: z.string().min(1).max(128) }),
      async handler(target, request) {
        if (target.dismissedNotifications.includes(request.body.notification)) return {};
        return run(request as Request, target, { type: 'DismissNotification', data: { notification: request.body.notification, now: now() } });
      },
    }),
    userOp({
      current: { operationId: 'userGenerateNewTotpMfaKey', path: '/api/user/mfa/totp/create-key' },
      method: 'post',
      summary: 'Create a TOTP key (SHA-1) to confirm with set-key; only when no MFA is configured',
      async handler(target, request) {
        const key = newTotpKey();
        await run(request as Request, target, { type: 'CreateTotpKey', data: { key, now: now() } });
        return { key, url: totpUrl(key, target.email ?? target.username, 'Edge ML service') };
      },
    }),
    userOp({
      current: { operationId: 'userSetTotpMfaKey', path: '/api/user/mfa/totp/set-key' },
      method: 'post',
      summary: 'Enable MFA with the created key and a token from the authenticator; answers recovery codes',
      body: z.object({ key: z.string().min(16).max(128), totpToken: z.string().min(1).max(64) }),
      async handler(target, request) {
        const recovery = newRecoveryCodes();
        const timeStep = await matchTotp(request.body.key, request.body.totpToken).catch(() => null);
        await run(request as Request, target, { type: 'EnableTotp', data: { key: request.body.key, timeStep, recoveryCodeHashes: recovery.hashes, now: now() } });
        return { recoveryCodes: recovery.codes };
      },
    }),
    userOp({
      current: { operationId: 'userDeleteTotpMfaKey', path: '/api/user/mfa/totp/clear' },
      method: 'post',
      summary: 'Disable MFA; needs a valid token',
      body: z.object({ totpToken: z.string().min(1).max(64) }),
      async handler(target, request) {
        return guarded(request as Request, target, async () => {
          const state = await loadUser(deps.events, target.id);
          const key = state.status === 'registered' ? state.mfa.key : null;
          const timeStep = key ? await matchTotp(key, request.body.totpToken) : null;
          return run(request as Request, target, { type: 'ClearTotp', data: { timeStep, now: now() } });
        });
      },
    }),
    userOp({
      current: { operationId: 'userUpgradeSubscription', path: '/api/user/subscription/upgrade' },
      method: 'post',
      summary: 'Start a subscription: answers 302 to the payment portal with a checkout id',
      body: z.object({ redirectUrlOrigin: z.string().optional(), redirectUrlQueryParams: z.string().optional() }).passthrough(),
      async handler(target, request) {
        const { redirectUrl, position } = await startCheckout(deps.events, target.id, deps.settings.paymentPortalUrl, ctxOf(request as Request));
        await request.settle(position);
        request.ctx.state.redirect = redirectUrl;
        return { redirectUrl };
      },
    }),
    userOp({
      current: { operationId: 'userCancelSubscription', path: '/api/user/subscription/cancel' },
      method: 'post',
      summary: 'Cancel the subscription at the end of the billing period',
      body: z.object({ reason: z.string().max(2000).optional() }).passthrough(),
      async handler(target, request) {
        return run(request as Request, target, { type: 'CancelSubscription', data: { reason: request.body.reason ?? null, now: now() } });
      },
    }),
    userOp({
      current: { operationId: 'userUndoCancelSubscription', path: '/api/user/subscription/undo-cancel' },
      method: 'post',
      summary: 'Keep the subscription after all, before the billing period ends',
      async handler(target, request) {
        return run(request as Request, target, { type: 'UndoCancelSubscription', data: { now: now() } });
      },
    }),
    userOp({
      current: { operationId: 'userGetSubscriptionMetrics', path: '/api/user/subscription/metrics' },
      method: 'get',
      summary: 'Billable compute metrics; only with an active subscription',
      async handler(target) {
        const s = target.subscription;
        if (s.status !== 'active' && s.status !== 'cancellation-pending') {
          throw new ForbiddenError('Subscription metrics are available only with an active subscription', 'NO_SUBSCRIPTION');
        }
        // Jobs do not exist yet: nothing has been billed in this period.
        return {
          totalComputeTimeThisPeriodSeconds: 0,
          computeTimeCurrentPeriodStart: s.periodStart ?? undefined,
          computeTimeCurrentPeriodEnd: s.periodEnd ?? undefined,
          totalStorageSizeBytes: 0,
          totalProjectsCount: (await deps.projects.forCollaborator(target.id)).length,
        };
      },
    }),
  ];

  // Fixed paths first: `/api/users/buckets` must not be taken for `/api/users/:userId`.
  const current: Operation[] = [];
  const byId: Operation[] = [];
  for (const spec of specs) {
    const handle = spec.handler as UserOperationSpec['handler'];
    if (spec.current) {
      current.push(
        operation({
          operationId: spec.current.operationId,
          method: spec.method,
          path: spec.current.path,
          summary: spec.summary,
          auth: 'jwt',
          body: spec.body,
          query: spec.query,
          keepAnswer: spec.keepAnswer,
          handler: (request) => handle(signedInUser(request.principal), request as never),
        }),
      );
    }
    if (spec.byId) {
      byId.push(
        operation({
          operationId: spec.byId.operationId,
          method: spec.method,
          path: spec.byId.path,
          summary: `${spec.summary} (oneself; staff may act on others)`,
          auth: 'jwt',
          body: spec.body,
          query: spec.query,
          keepAnswer: spec.keepAnswer,
          authorize: authorizeSelfOrStaff(deps.settings.staffUsernames),
          async handler(request) {
            const target = await targetUser(deps.users, request.principal, request.params);
            return handle(target, request as never);
          },
        }),
      );
    }
  }
  return [...current, ...byId];
}

export const TERMS_VERSION = '2026-01-28';

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}


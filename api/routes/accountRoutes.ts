import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { CommandContext } from '../../commands/commandContext';
import { createProject } from '../../commands/projects/createProject';
import { hashPassword } from '../../commands/passwords';
import { passwordResetEmail } from '../../commands/users/accountMail';
import { login } from '../../commands/users/login';
import { registerUser, type RegisterUserInput } from '../../commands/users/registerUser';
import { RESET_CODE_LIFETIME_MS, hashCode, newCode } from '../../commands/users/secrets';
import { loadUser, runUserCommand } from '../../commands/users/userCommands';
import { ForbiddenError, ValidationError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { accountKey, clientAddress, type ClientRequest } from '../auth/throttleKeys';
import { refusedWithRetryAfter } from '../auth/throttleAnswers';
import { operation, type Operation } from '../http/operation';
import { requireSwitch, whitelabelOfHost } from '../http/requestWhitelabel';

const GetJWTRequest = z.object({
  username: z.string().min(1).max(256),
  password: z.string().min(1).max(1024),
  uuid: z.string().optional(),
  ssoType: z.enum(['browser', 'cli']).optional(),
  sessionId: z.string().optional(),
  totpToken: z.string().max(64).optional(),
});

export const Password = z.string().min(8, 'must be at least 8 characters').max(1024);

export const CreateUserRequest = z.object({
  name: z.string().min(1).max(256),
  username: z.string().min(1).max(64),
  email: z.string().min(3).max(256),
  password: Password.optional(),
  projectName: z.string().min(1).max(128).optional(),
  privacyPolicy: z.boolean(),
  activationToken: z.string().optional(),
  identityProvider: z.string().optional(),
  jobTitle: z.string().max(256).optional(),
  sessionId: z.string().optional(),
  companyName: z.string().max(256).optional(),
  utmParams: z.array(z.unknown()).optional(),
  ignoreEmailValidation: z.boolean().optional(),
  turnstileResponse: z.string(),
  dateOfBirth: z.string().optional(),
  approverEmail: z.string().optional(),
});

const Email = z.string().min(3).max(256);
const Code = z.string().min(1).max(64);

/** What a sign-up body (createUser and the internal creations) registers. */
export const registrationInput = (b: {
  username: string;
  name: string;
  email: string;
  password?: string | undefined;
  jobTitle?: string | undefined;
  companyName?: string | undefined;
  privacyPolicy: boolean;
}): RegisterUserInput => ({
  username: b.username,
  name: b.name,
  email: b.email,
  password: b.password ?? null,
  jobTitle: b.jobTitle ?? null,
  companyName: b.companyName ?? null,
  privacyPolicy: b.privacyPolicy,
});

export const SIGNUP_CLOSED = 'Creating users through the API is no longer publicly available; the web sign-up page is used instead';
const INVALID_RESET = 'Invalid or expired password reset code';

/** Login, sign-up and password reset: the unauthenticated account operations. */
export function accountOperations(deps: ApiDeps): Operation[] {
  const context = (requestId: string, actor = 'anonymous'): CommandContext => ({ actor, correlationId: requestId, now: new Date() });

  /** The user a reset code was sent to, checked so that a wrong e-mail and a wrong code answer alike. */
  // Every guess of a reset code counts against the account (and the address) like a wrong password.
  const resetTarget = async (email: string, code: string, client: ClientRequest) => {
    const found = await deps.users.byUsernameOrEmail(email);
    return deps.throttle.guard({ account: accountKey(found, email), address: clientAddress(client, deps.settings.trustedProxyHops) }, async () => {
      const user = found;
      if (!user || user.emailLower !== email.trim().toLowerCase()) throw new ValidationError(INVALID_RESET, 'INVALID_CODE');
      const state = await loadUser(deps.events, user.id);
      const reset = state.status === 'registered' ? state.reset : null;
      if (!reset || reset.codeHash !== hashCode(code) || Date.parse(reset.expires) <= Date.now()) throw new ValidationError(INVALID_RESET, 'INVALID_CODE');
      return user;
    });
  };

  return [
    operation({
      operationId: 'login',
      method: 'post',
      path: '/api-login',
      summary: 'Get a JWT token for a username or e-mail and password (and a TOTP token when MFA is on)',
      auth: 'none',
      body: GetJWTRequest,
      async handler({ body, ctx, requestId }) {
        // Refused before the password is looked at: the answer tells nothing of the account.
        requireSwitch(await whitelabelOfHost(deps, ctx), 'allowPasswordAuth', 'Signing in with a password');
        const address = clientAddress(ctx, deps.settings.trustedProxyHops);
        const user = await deps.users.byUsernameOrEmail(body.username);
        const attempt = refusedWithRetryAfter(ctx, () => deps.throttle.begin({ account: accountKey(user, body.username), address }));
        try {
          if (attempt.delayMs > 0) await sleep(attempt.delayMs);
          const outcome = await login(
            deps.events,
            { userId: user?.id ?? null, password: body.password, totpToken: body.totpToken, address },
            context(requestId, user ? `user:${user.id}` : 'anonymous'),
          );
          if (!outcome.ok) {
            // Asking for the TOTP token after a right password is not an attempt to guess.
            if (outcome.passwordWasRight && outcome.error.code === 'TOTP_REQUIRED') attempt.abandoned();
            else attempt.failed();
            throw outcome.error;
          }
          attempt.succeeded();
          return { token: await deps.tokens.issue(outcome.userId, outcome.sessionVersion, new Date()) };
        } finally {
          // No-op when settled above; an unexpected error (a store failure) is no guess.
          attempt.abandoned();
        }
      },
    }),
    operation({
      operationId: 'createUser',
      method: 'post',
      path: '/api-user-create',
      summary: "Create a user and their first project (none on a white label without free projects); an activation code is e-mailed",
      auth: 'none',
      body: CreateUserRequest,
      async handler({ body, ctx, requestId, settle }) {
        if (!deps.settings.signupEnabled) throw new ForbiddenError(SIGNUP_CLOSED, 'SIGNUP_CLOSED');
        const whitelabel = await whitelabelOfHost(deps, ctx);
        requireSwitch(whitelabel, 'allowSignup', 'Signing up');
        const registered = await registerUser(deps, registrationInput(body), context(requestId));
        const userId = registered.userId;
        // The first project is a free project: a white label that allows none gets an account without one.
        if (whitelabel && !whitelabel.allowFreeProjects) {
          await settle(registered.position);
          return { id: userId };
        }
        const { position } = await createProject(
          deps,
          {
            name: body.projectName ?? `${body.username}-project-1`,
            ownerUserId: userId,
            isPublic: false,
            hostWhitelabel: whitelabel ? { whitelabelId: whitelabel.id, allowFreeProjects: whitelabel.allowFreeProjects } : undefined,
          },
          context(requestId, `user:${userId}`),
        );
        await settle(position);
        return { id: userId };
      },
    }),
    operation({
      operationId: 'requestResetPassword',
      method: 'post',
      path: '/api-user-request-reset-password',
      summary: 'E-mail a password reset code; the answer is the same whether or not the address is known',
      auth: 'none',
      body: z.object({ email: Email }),
      // No read-your-writes wait here: how long the answer takes must not tell whether the address exists.
      async handler({ body, ctx, requestId }) {
        const user = await deps.users.byUsernameOrEmail(body.email);
        // Past the account's cap the answer is the same success, with no mail (see ResetRequestThrottle).
        const mayMail = refusedWithRetryAfter(ctx, () => deps.resetRequests.admit({ account: accountKey(user, body.email), address: clientAddress(ctx, deps.settings.trustedProxyHops) })).send;
        if (mayMail && user && user.emailLower === body.email.trim().toLowerCase() && user.email) {
          const code = newCode();
          const ctx = context(requestId, `user:${user.id}`);
          await runUserCommand(deps.events, user.id, { type: 'RequestPasswordReset', data: { codeHash: hashCode(code), expires: new Date(ctx.now.getTime() + RESET_CODE_LIFETIME_MS), now: ctx.now } }, ctx);
          await deps.sendEmail(passwordResetEmail(user.id, user.email, user.name ?? user.username, code), ctx);
        }
        return {};
      },
    }),
    operation({
      operationId: 'verifyResetPassword',
      method: 'post',
      path: '/api-user-verify-reset-password-code',
      summary: 'Check that a password reset code is valid',
      auth: 'none',
      body: z.object({ email: Email, code: Code }),
      async handler({ body, ctx }) {
        await refusedWithRetryAfter(ctx, () => resetTarget(body.email, body.code, ctx));
        return {};
      },
    }),
    operation({
      operationId: 'resetPassword',
      method: 'post',
      path: '/api-user-reset-password',
      summary: 'Set a new password with a reset code; every earlier session ends',
      auth: 'none',
      body: z.object({ email: Email, code: Code, newPassword: Password }),
      async handler({ body, ctx: http, requestId, settle }) {
        const user = await refusedWithRetryAfter(http, () => resetTarget(body.email, body.code, http));
        const ctx = context(requestId, `user:${user.id}`);
        const { appended } = await runUserCommand(
          deps.events,
          user.id,
          { type: 'ResetPassword', data: { codeHash: hashCode(body.code), passwordHash: await hashPassword(body.newPassword), now: ctx.now } },
          ctx,
        );
        await settle(appended!.position);
        return {};
      },
    }),
  ];
}

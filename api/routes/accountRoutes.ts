import { z } from 'zod';
import type { CommandContext } from '../../commands/commandContext';
import { createProject } from '../../commands/projects/createProject';
import { registerUser } from '../../commands/users/registerUser';
import { verifyLogin } from '../../commands/users/verifyLogin';
import { ForbiddenError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { operation, type Operation } from '../http/operation';

const GetJWTRequest = z.object({
  username: z.string().min(1).max(256),
  password: z.string().min(1).max(1024),
  uuid: z.string().optional(),
  ssoType: z.enum(['browser', 'cli']).optional(),
  sessionId: z.string().optional(),
  totpToken: z.string().optional(),
});

const CreateUserRequest = z.object({
  name: z.string().min(1).max(256),
  username: z.string().min(1).max(64),
  email: z.string().min(3).max(256),
  password: z.string().min(8, 'must be at least 8 characters').max(1024).optional(),
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

export const SIGNUP_CLOSED = 'Creating users through the API is no longer publicly available; the web sign-up page is used instead';

/** Login and sign-up: the unauthenticated account operations. */
export function accountOperations(deps: ApiDeps): Operation[] {
  const context = (requestId: string, actor = 'anonymous'): CommandContext => ({ actor, correlationId: requestId, now: new Date() });

  return [
    operation({
      operationId: 'login',
      method: 'post',
      path: '/api-login',
      summary: 'Get a JWT token for a username or e-mail and password',
      auth: 'none',
      body: GetJWTRequest,
      async handler({ body }) {
        const user = await deps.users.byUsernameOrEmail(body.username);
        const userId = await verifyLogin(deps.events, user?.id ?? null, body.password);
        return { token: await deps.tokens.issue(userId, new Date()) };
      },
    }),
    operation({
      operationId: 'createUser',
      method: 'post',
      path: '/api-user-create',
      summary: 'Create a user and their first project',
      auth: 'none',
      body: CreateUserRequest,
      async handler({ body, requestId, settle }) {
        if (!deps.settings.signupEnabled) throw new ForbiddenError(SIGNUP_CLOSED, 'SIGNUP_CLOSED');
        const ctx = context(requestId);
        const { userId } = await registerUser(
          deps,
          {
            username: body.username,
            name: body.name,
            email: body.email,
            password: body.password ?? null,
            jobTitle: body.jobTitle ?? null,
            companyName: body.companyName ?? null,
            privacyPolicy: body.privacyPolicy,
          },
          ctx,
        );
        const { position } = await createProject(
          deps,
          { name: body.projectName ?? `${body.username}-project-1`, ownerUserId: userId, isPublic: false },
          context(requestId, `user:${userId}`),
        );
        await settle(position);
        return { id: userId };
      },
    }),
  ];
}

import type { Context } from 'koa';
import { z } from 'zod';
import { hashPassword } from '../../commands/passwords';
import { runUserCommand } from '../../commands/users/userCommands';
import { ForbiddenError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import type { UserDocument } from '../../projections/users/userDocument';
import type { ApiDeps } from '../apiDeps';
import { providersForEmail, verifyAccessToken } from '../auth/identityProviders';
import { intParam, operation, type Operation } from '../http/operation';
import { whitelabelOfHost } from '../http/requestWhitelabel';
import { Password } from './accountRoutes';

/**
 * Single sign-on: identity providers come from configuration (SSO_IDENTITY_PROVIDERS). On a white
 * label's domain only the providers it lists are offered and accepted.
 */
export function ssoOperations(deps: ApiDeps): Operation[] {
  const providers = deps.settings.identityProviders;
  const idpsOf = async (email: string | null, ctx: Context) => {
    if (!email) return [];
    const whitelabel = await whitelabelOfHost(deps, ctx);
    return providersForEmail(providers, email)
      .map((p) => p.name)
      .filter((name) => !whitelabel || whitelabel.identityProviders.includes(name));
  };
  // The router has decoded path parameters already; decoding again failed on a '%' (a 500).
  const lookup = (usernameOrEmail: string) => deps.users.byUsernameOrEmail(usernameOrEmail);

  return [
    operation({
      operationId: 'getSSODomainIdPs',
      method: 'get',
      path: '/api-sso/:usernameOrEmail',
      summary: 'Identity providers enabled for a user or an e-mail domain',
      auth: 'none',
      async handler({ params, ctx }) {
        const value = params.usernameOrEmail ?? '';
        const user: UserDocument | null = value.includes('@') ? null : await lookup(value);
        const idps = await idpsOf(value.includes('@') ? value : (user?.email ?? null), ctx);
        return { idps, ...(user && idps.length > 0 ? { needsPasswordSetup: !user.passwordConfigured } : {}) };
      },
    }),
    operation({
      operationId: 'getUserNeedToSetPassword',
      method: 'get',
      path: '/api-user-need-to-set-password/:usernameOrEmail',
      summary: 'Whether the user is registered and must set a password',
      auth: 'none',
      async handler({ params, ctx }) {
        const user = await lookup(params.usernameOrEmail ?? '');
        if (!user) return { needPassword: false, whitelabels: [], trials: [], idps: [] };
        return {
          // The address is told only to someone who must set a password, for the link to do so.
          email: user.passwordConfigured ? undefined : (user.email ?? undefined),
          needPassword: !user.passwordConfigured,
          emailVerified: user.activated,
          whitelabels: [],
          trials: [],
          idps: await idpsOf(user.email, ctx),
        };
      },
    }),
    operation({
      operationId: 'setUserPassword',
      method: 'post',
      path: '/api/users/:userId/set-password',
      summary: "Set a new SSO user's password, with an access token from their identity provider",
      auth: 'none',
      body: z.object({ accessToken: z.string().min(1).max(16_384), identityProvider: z.string().min(1).max(64), password: Password }),
      async handler({ params, body, ctx, requestId, settle }) {
        const userId = intParam(params, 'userId');
        const user = await deps.users.byId(userId);
        if (!user || !user.email) throw new NotFoundError(`User ${userId} not found`, 'USER_NOT_FOUND');
        const provider = providers.find((p) => p.name === body.identityProvider);
        if (!provider) throw new ValidationError(`Unknown identity provider "${body.identityProvider}"`, 'UNKNOWN_IDP');
        const whitelabel = await whitelabelOfHost(deps, ctx);
        if (whitelabel && !whitelabel.identityProviders.includes(provider.name)) {
          throw new ForbiddenError(`Identity provider "${provider.name}" is not one of the white label's identityProviders on ${whitelabel.domain}`, 'IDP_NOT_ALLOWED');
        }
        await verifyAccessToken(provider, body.accessToken, user.email);
        const now = new Date();
        const { appended } = await runUserCommand(
          deps.events,
          userId,
          { type: 'SetPasswordViaSso', data: { passwordHash: await hashPassword(body.password), now } },
          { actor: `user:${userId}`, correlationId: requestId, now },
        );
        await settle(appended!.position);
        return {};
      },
    }),
  ];
}

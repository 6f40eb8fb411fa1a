// Multi-factor authentication with a TOTP authenticator (`/api/user/mfa/totp/...`): create a key,
// confirm it with a token to enable MFA (answering recovery codes), disable it with a token.
import { z } from 'zod';
import { loadUser } from '../../commands/users/userCommands';
import { matchTotp, newRecoveryCodes, newTotpKey, totpUrl } from '../../commands/users/totp';
import type { ApiDeps } from '../apiDeps';
import { operation, type Operation } from '../http/operation';
import { userRequests } from './userRequests';

/** The signed-in user's own (JWT only). */
export function userTotpOperations(deps: ApiDeps): Operation[] {
  const { run, guarded } = userRequests(deps);
  return [
    operation({
      operationId: 'userGenerateNewTotpMfaKey',
      method: 'post',
      path: '/api/user/mfa/totp/create-key',
      summary: 'Create a TOTP key (SHA-1) to confirm with set-key; only when no MFA is configured',
      auth: 'jwt',
      async handler(request) {
        const { user } = request;
        const key = newTotpKey();
        await run(request, user, { type: 'CreateTotpKey', data: { key, now: new Date() } });
        return { key, url: totpUrl(key, user.email ?? user.username, 'Edge ML service') };
      },
    }),
    operation({
      operationId: 'userSetTotpMfaKey',
      method: 'post',
      path: '/api/user/mfa/totp/set-key',
      summary: 'Enable MFA with the created key and a token from the authenticator; answers recovery codes',
      auth: 'jwt',
      body: z.object({ key: z.string().min(16).max(128), totpToken: z.string().min(1).max(64) }),
      async handler(request) {
        const recovery = newRecoveryCodes();
        const timeStep = await matchTotp(request.body.key, request.body.totpToken).catch(() => null);
        await run(request, request.user, { type: 'EnableTotp', data: { key: request.body.key, timeStep, recoveryCodeHashes: recovery.hashes, now: new Date() } });
        return { recoveryCodes: recovery.codes };
      },
    }),
    operation({
      operationId: 'userDeleteTotpMfaKey',
      method: 'post',
      path: '/api/user/mfa/totp/clear',
      summary: 'Disable MFA; needs a valid token',
      auth: 'jwt',
      body: z.object({ totpToken: z.string().min(1).max(64) }),
      async handler(request) {
        const { user } = request;
        return guarded(request, user, async () => {
          const state = await loadUser(deps.events, user.id);
          const key = state.status === 'registered' ? state.mfa.key : null;
          const timeStep = key ? await matchTotp(key, request.body.totpToken) : null;
          return run(request, user, { type: 'ClearTotp', data: { timeStep, now: new Date() } });
        });
      },
    }),
  ];
}

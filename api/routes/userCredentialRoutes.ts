// What proves an account is its owner's, once signed in: the activation code e-mailed to their
// address, and the password. Guesses go through the login throttle.
import { z } from 'zod';
import { hashPassword, verifyPassword } from '../../commands/passwords';
import { activationEmail } from '../../commands/users/accountMail';
import { ACTIVATION_CODE_LIFETIME_MS, hashCode, newCode } from '../../commands/users/secrets';
import { loadUser, runUserCommand } from '../../commands/users/userCommands';
import { ForbiddenError, ValidationError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { accountKey, clientAddress } from '../auth/throttleKeys';
import { TooManyAttemptsError } from '../auth/loginThrottle';
import { refuse, refusedWithRetryAfter } from '../auth/throttleAnswers';
import { operation, type Operation } from '../http/operation';
import { Password } from './accountRoutes';
import { userRequests, withTwinByUserId } from './userRequests';

/** JWT only; each also by id (`/api/users/:userId/...`): oneself, or anyone for staff. */
export function userCredentialOperations(deps: ApiDeps): Operation[] {
  const { targetOf, run, guarded, contextOf } = userRequests(deps);
  const twin = (operationId: string, path: string, current: Operation) => withTwinByUserId(deps.settings.staffUsernames, { operationId, path }, current);
  return [
    ...twin(
      'activateUser',
      '/api/users/:userId/activate',
      operation({
        operationId: 'activateCurrentUser',
        method: 'post',
        path: '/api/user/activate',
        summary: 'Activate the account with the code from the activation e-mail',
        auth: 'jwt',
        body: z.object({ code: z.string().min(1).max(64) }),
        async handler(request) {
          const target = await targetOf(request);
          return guarded(request, target, () => run(request, target, { type: 'ActivateUser', data: { codeHash: hashCode(request.body.code), now: new Date() } }));
        },
      }),
    ),
    ...twin(
      'requestActivationCodeUser',
      '/api/users/:userId/request-activation',
      operation({
        operationId: 'requestActivationCodeCurrentUser',
        method: 'post',
        path: '/api/user/request-activation',
        summary: 'E-mail a fresh activation code; the earlier one stops working',
        auth: 'jwt',
        async handler(request) {
          const target = await targetOf(request);
          if (!target.email) throw new ValidationError('This account has no e-mail address');
          // The caller is signed in and asks for their own mail, so a 429 tells nothing new; sending
          // every time would let a stolen session flood the owner's mailbox.
          const admitted = refusedWithRetryAfter(request.ctx, () => deps.resetRequests.admit({ account: accountKey(target, ''), address: clientAddress(request.ctx, deps.settings.trustedProxyHops) }));
          if (!admitted.send) refuse(request.ctx, new TooManyAttemptsError(admitted.retryAfterSeconds, 'e-mails with a code'));
          const code = newCode();
          const ctx = contextOf(request);
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
    ),
    ...twin(
      'changePasswordUser',
      '/api/users/:userId/change-password',
      operation({
        operationId: 'changePasswordCurrentUser',
        method: 'post',
        path: '/api/user/change-password',
        summary: 'Change the password; every earlier session ends',
        auth: 'jwt',
        body: z.object({ currentPassword: z.string().min(1).max(1024), newPassword: Password }),
        async handler(request) {
          const target = await targetOf(request);
          if (request.user.id !== target.id) throw new ForbiddenError('Only the user can change their own password', 'NOT_YOURSELF');
          return guarded(request, target, async () => {
            const state = await loadUser(deps.events, target.id);
            const currentPasswordOk = state.status === 'registered' && state.passwordHash !== null && (await verifyPassword(request.body.currentPassword, state.passwordHash));
            return run(request, target, { type: 'ChangePassword', data: { currentPasswordOk, passwordHash: await hashPassword(request.body.newPassword), now: new Date() } });
          });
        },
      }),
    ),
  ];
}

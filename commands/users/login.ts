import { UnauthorizedError } from '../../domain/shared/errors';
import type { EventStore } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { DUMMY_PASSWORD_HASH, verifyPassword } from '../passwords';
import { hashCode } from './secrets';
import { matchTotp } from './totp';
import { loadUser, runUserCommand } from './userCommands';
import { toNewEvents } from '../handleCommand';
import { userDecider } from '../../domain/user/userDecider';
import { loginStream } from '../../domain/user/userEvents';

/** One message for an unknown user and a wrong password, so that neither can be told apart. */
export const INVALID_CREDENTIALS = 'Invalid username or password';
/** The official CLI looks for this text to ask for a TOTP code and retry. */
export const TOTP_REQUIRED = 'ERR_TOTP_TOKEN IS REQUIRED';
export const TOTP_INVALID = 'ERR_TOTP_TOKEN IS INVALID';

export type LoginOutcome =
  | { ok: true; userId: number; sessionVersion: number }
  | { ok: false; error: UnauthorizedError; passwordWasRight: boolean };

/**
 * Checks a login against the user's stream (read models never hold password hashes) and records
 * it, successful or not, as an event an auditor can read. `userId` is null when no user matched:
 * the password is still checked against a dummy hash, so the answer takes as long either way.
 */
export async function login(
  events: EventStore,
  input: { userId: number | null; password: string; totpToken: string | undefined; address: string },
  ctx: CommandContext,
): Promise<LoginOutcome> {
  const state = input.userId === null ? undefined : await loadUser(events, input.userId);
  const user = state?.status === 'registered' ? state : undefined;
  const passwordOk = await verifyPassword(input.password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
  if (!user) return { ok: false, error: new UnauthorizedError(INVALID_CREDENTIALS, 'INVALID_CREDENTIALS'), passwordWasRight: false };

  const totpGiven = input.totpToken !== undefined && input.totpToken.trim() !== '';
  const totpTimeStep = user.mfa.key !== null && passwordOk ? await matchTotp(user.mfa.key, input.totpToken) : null;
  const command = {
    type: 'RecordLogin' as const,
    data: { passwordOk, totpGiven, totpTimeStep, totpHash: totpGiven ? hashCode(input.totpToken!) : null, address: input.address, now: ctx.now },
  };
  const [decided] = userDecider.decide(command, user);
  let event = decided!;
  let sessionVersion = user.sessionVersion;
  if (event.type === 'LoginSucceeded' && event.data.method !== 'password') {
    // A TOTP step or recovery code is used up: decided again on the stream with its revision, so two
    // logins racing with the same token cannot both succeed.
    const handled = await runUserCommand(events, user.userId, command, ctx);
    event = handled.events[0]!;
    if (handled.state.status === 'registered') sessionVersion = handled.state.sessionVersion;
  } else {
    await events.appendToStream(loginStream(user.userId), toNewEvents([event], ctx), 'any');
  }
  if (event.type === 'LoginSucceeded') return { ok: true, userId: user.userId, sessionVersion };
  const reason = event.type === 'LoginFailed' ? event.data.reason : 'wrong-password';
  const error =
    reason === 'totp-required'
      ? new UnauthorizedError(`${TOTP_REQUIRED}: this account uses multi-factor authentication; send totpToken`, 'TOTP_REQUIRED')
      : reason === 'wrong-totp'
        ? new UnauthorizedError(`${TOTP_INVALID}: the TOTP token or recovery code is not valid`, 'TOTP_INVALID')
        : new UnauthorizedError(INVALID_CREDENTIALS, 'INVALID_CREDENTIALS');
  return { ok: false, error, passwordWasRight: reason !== 'wrong-password' };
}

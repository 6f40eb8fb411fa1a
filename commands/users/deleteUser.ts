import { ValidationError } from '../../domain/shared/errors';
import { userStream } from '../../domain/user/userEvents';
import type { Position } from '../../stores/eventstore/eventStore';
import type { SealingEventStore } from '../../stores/keystore/sealingEventStore';
import type { CommandContext } from '../commandContext';
import { verifyPassword } from '../passwords';
import type { UniquenessReservations } from '../uniqueness';
import { matchTotp } from './totp';
import { loadUser, runUserCommand } from './userCommands';

/**
 * Deletes the user: the password (and a TOTP token when MFA is on) must be right. The username and
 * e-mail become free and the user's key is destroyed: every event that holds their personal data
 * stays in the log, unreadable in any replay (crypto-shredding). The caller removes the photo blob
 * once the read models no longer show it (blobs are shared by content).
 */
export async function deleteUser(
  deps: { events: SealingEventStore; reservations: UniquenessReservations },
  input: { userId: number; username: string; email: string | null; password: string | undefined; totpToken: string | undefined },
  ctx: CommandContext,
): Promise<{ position: Position }> {
  if (!input.password) throw new ValidationError('The password is required to delete an account', 'PASSWORD_REQUIRED');
  const state = await loadUser(deps.events, input.userId);
  const passwordOk = state.status === 'registered' && state.passwordHash !== null && (await verifyPassword(input.password, state.passwordHash));
  const totpTimeStep = state.status === 'registered' && state.mfa.key !== null ? await matchTotp(state.mfa.key, input.totpToken) : null;
  const { appended } = await runUserCommand(deps.events, input.userId, { type: 'DeleteUser', data: { passwordOk, totpTimeStep, now: ctx.now } }, ctx);
  const owner = userStream(input.userId);
  await deps.reservations.release('username', input.username, owner, ctx);
  if (input.email) await deps.reservations.release('email', input.email, owner, ctx);
  await deps.events.destroySubject(owner);
  return { position: appended!.position };
}

import { userDecider } from '../../domain/user/userDecider';
import { ConflictError } from '../../domain/shared/errors';
import { userStream } from '../../domain/user/userEvents';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import type { IdAllocator } from '../idAllocator';
import { hashPassword } from '../passwords';
import type { UniquenessReservations } from '../uniqueness';
import type { SendEmail } from './accountMail';
import { hashCode, newCode } from './secrets';
import { runUserCommand } from './userCommands';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A user created on someone's behalf (an invitation): pending, without a username or password of
 * their own, with a third-party activation code e-mailed to them. The e-mail is reserved now; the
 * username when they activate.
 */
export async function createPendingUser(
  deps: { events: EventStore; ids: IdAllocator; reservations: UniquenessReservations; sendEmail: SendEmail },
  input: { email: string; name: string; invitedBy: string },
  ctx: CommandContext,
): Promise<{ userId: number; code: string; position: Position }> {
  // Refuse bad values (an unusable e-mail, a name with hidden characters) before anything is reserved.
  const probe = { placeholderUsername: 'pending-0', name: input.name, email: input.email, thirdPartyCodeHash: '', now: ctx.now };
  userDecider.decide({ type: 'RegisterPendingUser', data: { ...probe, userId: 0 } }, userDecider.initialState());
  const emailTaken = 'An account with this e-mail address already exists';
  if (await deps.reservations.isReserved('email', input.email)) throw new ConflictError(emailTaken, 'EMAIL_TAKEN');
  const userId = await deps.ids.next('user');
  const placeholderUsername = `pending-${userId}`;
  const code = newCode();
  await deps.reservations.reserve('email', input.email, userStream(userId), ctx, emailTaken);
  try {
    await deps.reservations.reserve('username', placeholderUsername, userStream(userId), ctx, 'Placeholder username taken');
    const { appended } = await runUserCommand(
      deps.events,
      userId,
      { type: 'RegisterPendingUser', data: { userId, placeholderUsername, name: input.name, email: input.email, thirdPartyCodeHash: hashCode(code), now: ctx.now } },
      ctx,
    );
    const text = [`${input.invitedBy} invited you.`, `Your activation code is: ${code}`, 'Choose a username and a password with it to activate your account.'];
    await deps.sendEmail({ userId, to: input.email, subject: 'You are invited', bodyText: text.join('\n\n'), bodyHTML: text.map((l) => `<p>${escape(l)}</p>`).join('\n') }, ctx);
    return { userId, code, position: appended!.position };
  } catch (error) {
    await deps.reservations.release('email', input.email, userStream(userId), ctx);
    throw error;
  }
}

/** Activates a pending user with their code, the username they choose and a password. */
export async function activatePendingUser(
  deps: { events: EventStore; reservations: UniquenessReservations },
  input: { userId: number; oldUsername: string; code: string; username: string; name: string | null; password: string },
  ctx: CommandContext,
): Promise<{ sessionVersion: number; position: Position }> {
  const owner = userStream(input.userId);
  await deps.reservations.reserve('username', input.username, owner, ctx, `Username "${input.username}" is already taken`);
  try {
    const { appended, state } = await runUserCommand(
      deps.events,
      input.userId,
      { type: 'ActivatePendingUser', data: { thirdPartyCodeHash: hashCode(input.code), username: input.username, name: input.name, passwordHash: await hashPassword(input.password), now: ctx.now } },
      ctx,
    );
    await deps.reservations.release('username', input.oldUsername, owner, ctx);
    return { sessionVersion: state.status === 'registered' ? state.sessionVersion : 0, position: appended!.position };
  } catch (error) {
    if (input.username.toLowerCase() !== input.oldUsername.toLowerCase()) await deps.reservations.release('username', input.username, owner, ctx);
    throw error;
  }
}

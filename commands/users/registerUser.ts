import { ConflictError } from '../../domain/shared/errors';
import { userDecider } from '../../domain/user/userDecider';
import { userStream } from '../../domain/user/userEvents';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';
import { hashPassword } from '../passwords';
import type { UniquenessReservations } from '../uniqueness';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';

export interface RegisterUserInput {
  username: string;
  name: string;
  email: string;
  password: string | null;
  jobTitle: string | null;
  companyName: string | null;
  privacyPolicy: boolean;
}

export interface RegisterUserDeps {
  events: EventStore;
  ids: IdAllocator;
  reservations: UniquenessReservations;
}

/**
 * Reserves the username and the e-mail (each must be unique across users), then registers the user.
 * A refused registration releases what it reserved.
 */
export async function registerUser(deps: RegisterUserDeps, input: RegisterUserInput, ctx: CommandContext): Promise<{ userId: number; position: Position }> {
  // Refuse bad or taken values before anything is appended; the reservations below still decide
  // races between two requests for the same name.
  userDecider.decide({ type: 'RegisterUser', data: { ...input, userId: 0, passwordHash: null, now: ctx.now } }, userDecider.initialState());
  const usernameTaken = `Username "${input.username}" is already taken`;
  const emailTaken = 'An account with this e-mail address already exists';
  if (await deps.reservations.isReserved('username', input.username)) throw new ConflictError(usernameTaken, 'USERNAME_TAKEN');
  if (await deps.reservations.isReserved('email', input.email)) throw new ConflictError(emailTaken, 'EMAIL_TAKEN');

  const userId = await deps.ids.next('user');
  const owner = userStream(userId);
  const passwordHash = input.password === null ? null : await hashPassword(input.password);
  const reserved: [string, string][] = [];
  try {
    await deps.reservations.reserve('username', input.username, owner, ctx, usernameTaken);
    reserved.push(['username', input.username]);
    await deps.reservations.reserve('email', input.email, owner, ctx, emailTaken);
    reserved.push(['email', input.email]);
    const { appended } = await handleCommand(
      deps.events,
      owner,
      userDecider,
      { type: 'RegisterUser', data: { ...input, userId, passwordHash, now: ctx.now } },
      ctx,
    );
    return { userId, position: appended!.position };
  } catch (error) {
    for (const [kind, value] of reserved) await deps.reservations.release(kind, value, owner, ctx);
    throw error;
  }
}

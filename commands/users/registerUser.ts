import { ConflictError } from '../../domain/shared/errors';
import { userDecider } from '../../domain/user/userDecider';
import { userStream } from '../../domain/user/userEvents';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import type { IdAllocator } from '../idAllocator';
import { hashPassword } from '../passwords';
import type { UniquenessReservations } from '../uniqueness';
import { activationEmail, type SendEmail } from './accountMail';
import { ACTIVATION_CODE_LIFETIME_MS, hashCode, newCode } from './secrets';
import { runUserCommand } from './userCommands';

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
  sendEmail: SendEmail;
}

/**
 * Reserves the username and the e-mail (each unique across users), registers the user with an
 * activation code, and e-mails the code. The first user of an installation (a reservation too, so
 * two racing sign-ups cannot both be first) is staff. A refused registration releases what it reserved.
 */
export async function registerUser(deps: RegisterUserDeps, input: RegisterUserInput, ctx: CommandContext): Promise<{ userId: number; position: Position }> {
  const code = newCode();
  const base = { ...input, passwordHash: null, firstUser: false, activationCode: { hash: hashCode(code), expires: new Date(ctx.now.getTime() + ACTIVATION_CODE_LIFETIME_MS) }, now: ctx.now };
  // Refuse bad or taken values before anything is appended; the reservations below still decide
  // races between two requests for the same name.
  userDecider.decide({ type: 'RegisterUser', data: { ...base, userId: 0 } }, userDecider.initialState());
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
    const firstUser = !(await deps.reservations.isReserved('installation', 'first-user')) && (await deps.reservations.tryReserve('installation', 'first-user', owner, ctx));
    const { appended } = await runUserCommand(deps.events, userId, { type: 'RegisterUser', data: { ...base, userId, passwordHash, firstUser } }, ctx);
    const mail = await deps.sendEmail(activationEmail(userId, input.email, input.name, code), ctx);
    return { userId, position: mail.position > appended!.position ? mail.position : appended!.position };
  } catch (error) {
    for (const [kind, value] of reserved) await deps.reservations.release(kind, value, owner, ctx);
    throw error;
  }
}

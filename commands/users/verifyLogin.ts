import { fold } from '../../domain/shared/decider';
import { UnauthorizedError } from '../../domain/shared/errors';
import { userDecider } from '../../domain/user/userDecider';
import { userStream, type UserEvent } from '../../domain/user/userEvents';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { DUMMY_PASSWORD_HASH, verifyPassword } from '../passwords';

/** One message for an unknown user and a wrong password, so that neither can be told apart. */
export const INVALID_CREDENTIALS = 'Invalid username or password';

/**
 * Checks a password against the user's stream (the read models never hold password hashes).
 * `userId` is null when no user matched; the check still runs, against a dummy hash, so the
 * answer takes as long either way.
 */
export async function verifyLogin(events: EventStore, userId: number | null, password: string): Promise<number> {
  const state = userId === null ? userDecider.initialState() : fold(userDecider, (await events.readStream(userStream(userId))) as unknown as UserEvent[]);
  const hash = state.status === 'registered' ? state.passwordHash : null;
  const ok = await verifyPassword(password, hash ?? DUMMY_PASSWORD_HASH);
  if (!ok || state.status !== 'registered' || hash === null) throw new UnauthorizedError(INVALID_CREDENTIALS, 'INVALID_CREDENTIALS');
  return state.userId;
}

import { ConflictError, ValidationError, assertNever } from '../shared/errors';
import type { Decider } from '../shared/decider';
import type { UserEvent } from './userEvents';

export type UserCommand = {
  type: 'RegisterUser';
  data: {
    userId: number;
    username: string;
    name: string;
    email: string;
    jobTitle: string | null;
    companyName: string | null;
    passwordHash: string | null;
    privacyPolicy: boolean;
    now: Date;
  };
};

export type UserState =
  | { status: 'unregistered' }
  | { status: 'registered'; userId: number; username: string; passwordHash: string | null };

const USERNAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]{1,63}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const userDecider: Decider<UserCommand, UserEvent, UserState> = {
  initialState: () => ({ status: 'unregistered' }),

  decide(command, state) {
    switch (command.type) {
      case 'RegisterUser': {
        const c = command.data;
        if (state.status !== 'unregistered') throw new ConflictError(`User ${c.userId} already exists`);
        if (!USERNAME.test(c.username)) {
          throw new ValidationError(
            'Username must be 2 to 64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit',
          );
        }
        if (!EMAIL.test(c.email)) throw new ValidationError(`"${c.email}" is not a valid e-mail address`);
        if (c.name.trim() === '') throw new ValidationError('Name must not be empty');
        if (!c.privacyPolicy) throw new ValidationError('The privacy policy must be accepted to create an account');
        return [
          {
            type: 'UserRegistered',
            data: {
              userId: c.userId,
              username: c.username,
              name: c.name.trim(),
              email: c.email,
              jobTitle: c.jobTitle,
              companyName: c.companyName,
              passwordHash: c.passwordHash,
              registered: c.now.toISOString(),
            },
          },
        ];
      }
      default:
        return assertNever(command.type);
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'UserRegistered':
        return {
          status: 'registered',
          userId: event.data.userId,
          username: event.data.username,
          passwordHash: event.data.passwordHash,
        };
      default:
        return assertNever(event.type);
    }
  },
};

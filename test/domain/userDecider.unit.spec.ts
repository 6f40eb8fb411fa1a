import { describe, it } from 'vitest';
import { ConflictError, ValidationError } from '../../domain/shared/errors';
import { userDecider, type UserCommand } from '../../domain/user/userDecider';
import type { UserRegistered } from '../../domain/user/userEvents';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(userDecider);
const now = new Date('2026-11-25T10:00:00.000Z');

const register = (overrides: Partial<Extract<UserCommand, { type: 'RegisterUser' }>['data']> = {}): UserCommand => ({
  type: 'RegisterUser',
  data: {
    userId: 7,
    username: 'ada',
    name: ' Ada Lovelace ',
    email: 'ada@example.com',
    jobTitle: null,
    companyName: 'Analytical Engines',
    passwordHash: 'scrypt$hash',
    privacyPolicy: true,
    now,
    ...overrides,
  },
});

const registered: UserRegistered = {
  type: 'UserRegistered',
  data: {
    userId: 7,
    username: 'ada',
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    jobTitle: null,
    companyName: 'Analytical Engines',
    passwordHash: 'scrypt$hash',
    registered: now.toISOString(),
  },
};

describe('a user that does not exist yet', () => {
  it('is registered with a trimmed name and the time of the command', () => {
    spec.given([]).when(register()).then([registered]);
  });

  it('may register without a password (identity-provider users)', () => {
    spec.given([]).when(register({ passwordHash: null })).then([{ ...registered, data: { ...registered.data, passwordHash: null } }]);
  });

  it('is refused without accepting the privacy policy', () => {
    spec.given([]).when(register({ privacyPolicy: false })).thenThrows(ValidationError, /privacy policy/);
  });

  it('is refused a username with spaces or symbols', () => {
    spec.given([]).when(register({ username: 'ada lovelace' })).thenThrows(ValidationError, /Username/);
    spec.given([]).when(register({ username: '../x' })).thenThrows(ValidationError, /Username/);
  });

  it('is refused an e-mail address without a domain', () => {
    spec.given([]).when(register({ email: 'ada@' })).thenThrows(ValidationError, /e-mail/);
  });

  it('is refused an empty name', () => {
    spec.given([]).when(register({ name: '   ' })).thenThrows(ValidationError, /Name/);
  });
});

describe('a registered user', () => {
  it('cannot be registered again', () => {
    spec.given([registered]).when(register()).thenThrows(ConflictError, /already exists/);
  });
});

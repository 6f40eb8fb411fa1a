import { describe, expect, it } from 'vitest';
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError, ValidationError } from '../../domain/shared/errors';
import { userDecider, type UserCommand } from '../../domain/user/userDecider';
import type { UserEvent } from '../../domain/user/userEvents';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(userDecider);
const now = new Date('2026-11-25T10:00:00.000Z');
const later = (ms: number) => new Date(now.getTime() + ms);
const day = 24 * 3600 * 1000;

type Register = Extract<UserCommand, { type: 'RegisterUser' }>;
const register = (overrides: Partial<Register['data']> = {}): UserCommand => ({
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
    firstUser: false,
    activationCode: { hash: 'code-hash', expires: later(day) },
    now,
    ...overrides,
  },
});

/** The events of a sequence of commands, each decided on the state the previous ones left. */
function history(...commands: UserCommand[]): UserEvent[] {
  let state = userDecider.initialState();
  const events: UserEvent[] = [];
  for (const c of commands) {
    for (const e of userDecider.decide(c, state)) {
      events.push(e);
      state = userDecider.evolve(state, e);
    }
  }
  return events;
}

const registered = history(register());
const activated = history(register(), { type: 'ActivateUser', data: { codeHash: 'code-hash', now } });
const withMfa = history(
  register(),
  { type: 'CreateTotpKey', data: { key: 'KEY', now } },
  { type: 'EnableTotp', data: { key: 'KEY', timeStep: 100, recoveryCodeHashes: ['rc1', 'rc2'], now } },
);
const login = (overrides: Partial<Extract<UserCommand, { type: 'RecordLogin' }>['data']> = {}): UserCommand => ({
  type: 'RecordLogin',
  data: { passwordOk: true, totpGiven: false, totpTimeStep: null, totpHash: null, address: '10.0.0.1', now, ...overrides },
});
const subscribed = history(
  register(),
  { type: 'StartSubscriptionCheckout', data: { checkoutId: 'co_1', now } },
  { type: 'ActivateSubscription', data: { checkoutId: 'co_1', periodStart: now, periodEnd: later(30 * day), now } },
);
const canceling = [...subscribed, ...userDecider.decide({ type: 'CancelSubscription', data: { reason: null, now } }, subscribed.reduce(userDecider.evolve, userDecider.initialState()))];
const canceled = [...canceling, { type: 'SubscriptionCanceled', data: { userId: 7, canceled: later(31 * day).toISOString() } } as UserEvent];
const deleted = history(register(), { type: 'DeleteUser', data: { passwordOk: true, totpTimeStep: null, now } });

describe('a user that does not exist yet', () => {
  it('is registered, not activated, with an activation code', () => {
    spec.given([]).when(register({ firstUser: true })).thenMatches((events) => {
      expect(events.map((e) => e.type)).toEqual(['UserRegistered', 'ActivationCodeIssued']);
      expect(events[0]!.data).toMatchObject({ name: 'Ada Lovelace', firstUser: true, pending: false, registered: now.toISOString() });
      expect(events[1]!.data).toEqual({ userId: 7, codeHash: 'code-hash', expires: later(day).toISOString(), issued: now.toISOString() });
    });
  });

  it('is refused without the privacy policy, with a bad username, e-mail or name', () => {
    spec.given([]).when(register({ privacyPolicy: false })).thenThrows(ValidationError, /privacy policy/);
    spec.given([]).when(register({ username: 'ada lovelace' })).thenThrows(ValidationError, /Username/);
    spec.given([]).when(register({ email: 'ada@' })).thenThrows(ValidationError, /e-mail/);
    spec.given([]).when(register({ name: '  ' })).thenThrows(ValidationError, /Name/);
  });

  it('cannot do anything else', () => {
    spec.given([]).when({ type: 'ActivateUser', data: { codeHash: 'x', now } }).thenThrows(NotFoundError);
  });
});

describe('a user that is not activated', () => {
  it('is activated by the right, unexpired code', () => {
    spec.given(registered).when({ type: 'ActivateUser', data: { codeHash: 'code-hash', now } }).then([
      { type: 'UserActivated', data: { userId: 7, via: 'code', activated: now.toISOString() } },
    ]);
  });

  it('is not activated by a wrong or expired code', () => {
    spec.given(registered).when({ type: 'ActivateUser', data: { codeHash: 'other', now } }).thenThrows(ValidationError, /activation code/);
    spec.given(registered).when({ type: 'ActivateUser', data: { codeHash: 'code-hash', now: later(day + 1) } }).thenThrows(ValidationError, /expired/);
  });

  it('gets a fresh code that replaces the old one', () => {
    const fresh = [...registered, ...history(register()).slice(0, 0), { type: 'ActivationCodeIssued', data: { userId: 7, codeHash: 'new', expires: later(day).toISOString(), issued: now.toISOString() } } as UserEvent];
    spec.given(fresh).when({ type: 'ActivateUser', data: { codeHash: 'code-hash', now } }).thenThrows(ValidationError);
    spec.given(fresh).when({ type: 'ActivateUser', data: { codeHash: 'new', now } }).thenMatches((e) => expect(e[0]!.type).toBe('UserActivated'));
  });
});

describe('an activated user', () => {
  it('is not activated twice and asks for no new code', () => {
    spec.given(activated).when({ type: 'ActivateUser', data: { codeHash: 'code-hash', now } }).thenThrows(ConflictError, /already activated/);
    spec.given(activated).when({ type: 'IssueActivationCode', data: { codeHash: 'x', expires: later(day), now } }).thenThrows(ConflictError);
  });

  it('changes the password only with the current one, moving the session version on', () => {
    spec.given(activated).when({ type: 'ChangePassword', data: { currentPasswordOk: false, passwordHash: 'new', now } }).thenThrows(UnauthorizedError);
    spec.given(activated).when({ type: 'ChangePassword', data: { currentPasswordOk: true, passwordHash: 'new', now } }).then([
      { type: 'PasswordChanged', data: { userId: 7, passwordHash: 'new', via: 'change', sessionVersion: 1, changed: now.toISOString() } },
    ]);
  });

  it('resets the password with a live reset code, once', () => {
    const requested = [...activated, { type: 'PasswordResetRequested', data: { userId: 7, codeHash: 'reset', expires: later(3600_000).toISOString(), requested: now.toISOString() } } as UserEvent];
    spec.given(requested).when({ type: 'ResetPassword', data: { codeHash: 'reset', passwordHash: 'p2', now } }).thenMatches((e) => expect(e[0]!.data).toMatchObject({ via: 'reset', sessionVersion: 1 }));
    spec.given(requested).when({ type: 'ResetPassword', data: { codeHash: 'reset', passwordHash: 'p2', now: later(3600_001) } }).thenThrows(ValidationError, /reset code/);
    const used = [...requested, ...userDecider.decide({ type: 'ResetPassword', data: { codeHash: 'reset', passwordHash: 'p2', now } }, requested.reduce(userDecider.evolve, userDecider.initialState()))];
    spec.given(used).when({ type: 'ResetPassword', data: { codeHash: 'reset', passwordHash: 'p3', now } }).thenThrows(ValidationError);
  });

  it('logs in with the right password and fails with a wrong one', () => {
    spec.given(activated).when(login()).thenMatches((e) => expect(e[0]).toMatchObject({ type: 'LoginSucceeded', data: { method: 'password' } }));
    spec.given(activated).when(login({ passwordOk: false })).thenMatches((e) => expect(e[0]).toMatchObject({ type: 'LoginFailed', data: { reason: 'wrong-password' } }));
  });

  it('creates a TOTP key and enables MFA with a token matching it', () => {
    const keyed = history(register(), { type: 'CreateTotpKey', data: { key: 'KEY', now } });
    spec.given(keyed).when({ type: 'EnableTotp', data: { key: 'OTHER', timeStep: 5, recoveryCodeHashes: [], now } }).thenThrows(ValidationError, /Unknown MFA key/);
    spec.given(keyed).when({ type: 'EnableTotp', data: { key: 'KEY', timeStep: null, recoveryCodeHashes: [], now } }).thenThrows(ValidationError, /Invalid TOTP/);
    spec.given(keyed).when({ type: 'EnableTotp', data: { key: 'KEY', timeStep: 5, recoveryCodeHashes: ['h'], now } }).thenMatches((e) => expect(e[0]!.type).toBe('TotpEnabled'));
  });
});

describe('a user with MFA configured', () => {
  it('cannot create another key', () => {
    spec.given(withMfa).when({ type: 'CreateTotpKey', data: { key: 'K2', now } }).thenThrows(ConflictError, /already configured/);
  });

  it('needs a TOTP token to log in, and a token counts once', () => {
    spec.given(withMfa).when(login()).thenMatches((e) => expect(e[0]).toMatchObject({ type: 'LoginFailed', data: { reason: 'totp-required' } }));
    spec.given(withMfa).when(login({ totpGiven: true, totpTimeStep: 101 })).thenMatches((e) => expect(e[0]).toMatchObject({ type: 'LoginSucceeded', data: { method: 'totp', totpTimeStep: 101 } }));
    const used = history(register(), { type: 'CreateTotpKey', data: { key: 'KEY', now } }, { type: 'EnableTotp', data: { key: 'KEY', timeStep: 100, recoveryCodeHashes: ['rc1'], now } }, login({ totpGiven: true, totpTimeStep: 101 }));
    spec.given(used).when(login({ totpGiven: true, totpTimeStep: 101 })).thenMatches((e) => expect(e[0]).toMatchObject({ type: 'LoginFailed', data: { reason: 'wrong-totp' } }));
  });

  it('accepts an unused recovery code once', () => {
    spec.given(withMfa).when(login({ totpGiven: true, totpHash: 'rc1' })).thenMatches((e) => expect(e[0]).toMatchObject({ type: 'LoginSucceeded', data: { method: 'recovery-code' } }));
    const used = [...withMfa, ...userDecider.decide(login({ totpGiven: true, totpHash: 'rc1' }), withMfa.reduce(userDecider.evolve, userDecider.initialState()))];
    spec.given(used).when(login({ totpGiven: true, totpHash: 'rc1' })).thenMatches((e) => expect(e[0]).toMatchObject({ type: 'LoginFailed' }));
  });

  it('clears MFA only with a valid token, and deletion needs one too', () => {
    spec.given(withMfa).when({ type: 'ClearTotp', data: { timeStep: null, now } }).thenThrows(ValidationError, /Invalid TOTP/);
    spec.given(withMfa).when({ type: 'ClearTotp', data: { timeStep: 101, now } }).thenMatches((e) => expect(e[0]!.type).toBe('TotpCleared'));
    spec.given(withMfa).when({ type: 'DeleteUser', data: { passwordOk: true, totpTimeStep: null, now } }).thenThrows(ForbiddenError, /TOTP/);
  });
});

describe('subscription states', () => {
  it('activates on the payment notification for the started checkout, once', () => {
    const checkout = history(register(), { type: 'StartSubscriptionCheckout', data: { checkoutId: 'co_1', now } });
    spec.given(checkout).when({ type: 'ActivateSubscription', data: { checkoutId: 'co_x', periodStart: now, periodEnd: later(day), now } }).thenThrows(ValidationError, /Unknown checkout/);
    spec.given(subscribed).when({ type: 'ActivateSubscription', data: { checkoutId: 'co_1', periodStart: now, periodEnd: later(day), now } }).then([]);
  });

  it('an active subscription becomes cancellation pending until the period ends', () => {
    spec.given(subscribed).when({ type: 'CancelSubscription', data: { reason: null, now } }).then([
      { type: 'SubscriptionCancellationRequested', data: { userId: 7, reason: null, requested: now.toISOString(), effective: later(30 * day).toISOString() } },
    ]);
  });

  it('cancellation pending is undone before the period ends, not after', () => {
    spec.given(canceling).when({ type: 'UndoCancelSubscription', data: { now } }).thenMatches((e) => expect(e[0]!.type).toBe('SubscriptionCancellationUndone'));
    spec.given(canceling).when({ type: 'UndoCancelSubscription', data: { now: later(31 * day) } }).thenThrows(ConflictError, /period has ended/);
  });

  it('ends at the end of the period, and an early or repeated end does nothing', () => {
    spec.given(canceling).when({ type: 'EndSubscription', data: { now: later(29 * day) } }).then([]);
    spec.given(canceling).when({ type: 'EndSubscription', data: { now: later(31 * day) } }).thenMatches((e) => expect(e[0]!.type).toBe('SubscriptionCanceled'));
    spec.given(canceled).when({ type: 'EndSubscription', data: { now: later(32 * day) } }).then([]);
  });

  it('a canceled subscription cannot be reactivated', () => {
    spec.given(canceled).when({ type: 'UndoCancelSubscription', data: { now } }).thenThrows(ConflictError, /cannot be reactivated/);
    spec.given(canceled).when({ type: 'StartSubscriptionCheckout', data: { checkoutId: 'co_2', now } }).thenThrows(ConflictError, /cannot be reactivated/);
  });

  it('metrics-free states refuse cancel', () => {
    spec.given(registered).when({ type: 'CancelSubscription', data: { reason: null, now } }).thenThrows(ConflictError, /no active subscription/);
  });
});

describe('trials and developer profile', () => {
  it('allows one enterprise trial per user', () => {
    const trial = history(register(), { type: 'StartEnterpriseTrial', data: { trialId: 1, organizationId: 2, expirationDate: later(14 * day), notes: null, now } });
    spec.given(trial).when({ type: 'StartEnterpriseTrial', data: { trialId: 3, organizationId: 4, expirationDate: later(14 * day), notes: null, now } }).thenThrows(ConflictError, /only once/);
  });

  it('allows one developer profile', () => {
    const profile = history(register(), { type: 'CreateDeveloperProfile', data: { organizationId: 2, now } });
    spec.given(profile).when({ type: 'CreateDeveloperProfile', data: { organizationId: 3, now } }).thenThrows(ConflictError);
  });
});

describe('a deleted user', () => {
  it('needed the right password to be deleted', () => {
    spec.given(registered).when({ type: 'DeleteUser', data: { passwordOk: false, totpTimeStep: null, now } }).thenThrows(UnauthorizedError);
  });

  it('can do nothing any more', () => {
    spec.given(deleted).when(login()).thenThrows(NotFoundError, /deleted/);
    spec.given(deleted).when({ type: 'ChangePassword', data: { currentPasswordOk: true, passwordHash: 'x', now } }).thenThrows(NotFoundError);
  });
});

describe('texts a user shows to others (bounded, no control or bidirectional-override characters)', () => {
  it('refuses a name, e-mail, job title or company that hides characters, naming the field', () => {
    spec.given([]).when(register({ name: 'Ada\u202E' })).thenThrows(ValidationError, /^"name" contains an invisible formatting character \(U\+202E\)/);
    spec.given([]).when(register({ name: 'Ada\u0000' })).thenThrows(ValidationError, /^"name" contains a control character/);
    spec.given([]).when(register({ email: 'ada\u0000@example.com' })).thenThrows(ValidationError, /^"email" contains a control character/);
    spec.given([]).when(register({ jobTitle: 'Engineer\u2066' })).thenThrows(ValidationError, /^"jobTitle" contains an invisible/);
    spec.given([]).when(register({ companyName: 'x'.repeat(3_000_000) })).thenThrows(ValidationError, /^"companyName" is 3000000 characters long; at most 256/);
  });

  it('accepts names in any script, and an empty job title', () => {
    spec
      .given([])
      .when(register({ name: 'Ада Лавлейс 李', jobTitle: '' }))
      .thenMatches(([event]) => expect(event).toMatchObject({ type: 'UserRegistered', data: { name: 'Ада Лавлейс 李', jobTitle: '' } }));
  });

  it('refuses profile updates that hide characters or are unbounded', () => {
    const update = (data: Partial<Extract<UserCommand, { type: 'UpdateProfile' }>['data']>): UserCommand => ({ type: 'UpdateProfile', data: { now, ...data } });
    spec.given(registered).when(update({ name: 'Ada\nLovelace' })).thenThrows(ValidationError, /^"name" contains a control character \(U\+000A\)/);
    spec.given(registered).when(update({ companyName: 'ACME\u202D' })).thenThrows(ValidationError, /^"companyName" contains an invisible/);
    spec.given(registered).when(update({ timezone: 'Europe/\u0000' })).thenThrows(ValidationError, /^"timezone" contains a control character/);
    spec.given(registered).when(update({ experiments: ['ok', 'b\u2029'] })).thenThrows(ValidationError, /^"experiments"\[1\] contains an invisible/);
  });

  it('refuses other texts it records when they hide characters', () => {
    spec.given(registered).when({ type: 'DismissNotification', data: { notification: 'n\u0007', now } }).thenThrows(ValidationError, /^"notification" contains a control character/);
    spec.given(registered).when({ type: 'AcceptTermsOfService', data: { version: '1\u202E', now } }).thenThrows(ValidationError, /^"version" contains an invisible/);
    spec
      .given(registered)
      .when({ type: 'StartEnterpriseTrial', data: { trialId: 1, organizationId: 2, expirationDate: later(day), notes: 'line one\nline \u0000two', now } })
      .thenThrows(ValidationError, /^"notes" contains a control character \(U\+0000\)/);
    spec.given(subscribed).when({ type: 'CancelSubscription', data: { reason: 'too\u202Eexpensive', now } }).thenThrows(ValidationError, /^"reason" contains an invisible/);
  });

  it('refuses times that are not valid dates', () => {
    spec.given([]).when(register({ now: new Date(Number.NaN) })).thenThrows(ValidationError, /now is not a valid date/);
    spec.given(registered).when({ type: 'RequestPasswordReset', data: { codeHash: 'h', expires: new Date(Number.NaN), now } }).thenThrows(ValidationError, /reset code expiry is not a valid date/);
  });
});

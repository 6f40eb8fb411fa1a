import type { Decider } from '../shared/decider';
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError, ValidationError, assertNever } from '../shared/errors';
import { checkDate } from '../shared/numberRules';
import { checkOptionalText, checkText, type TextRule } from '../shared/textRules';
import type { ProjectsSortOrder, UserEvent } from './userEvents';

// Secrets (passwords, codes, TOTP tokens) are checked by the command handlers, which hold the
// crypto; commands carry what was found (a hash, a matched TOTP time step) and the decider applies
// the rules: expiry, single use, the states of the spec's state table.

type At = { now: Date };

export type UserCommand =
  | {
      type: 'RegisterUser';
      data: At & {
        userId: number;
        username: string;
        name: string;
        email: string;
        jobTitle: string | null;
        companyName: string | null;
        passwordHash: string | null;
        privacyPolicy: boolean;
        firstUser: boolean;
        /** Issued with the registration so the welcome e-mail carries it. */
        activationCode: { hash: string; expires: Date };
      };
    }
  | {
      type: 'RegisterPendingUser';
      data: At & { userId: number; placeholderUsername: string; name: string; email: string; thirdPartyCodeHash: string };
    }
  | { type: 'ActivatePendingUser'; data: At & { thirdPartyCodeHash: string; username: string; name: string | null; passwordHash: string } }
  | { type: 'SetPasswordViaSso'; data: At & { passwordHash: string } }
  | { type: 'IssueActivationCode'; data: At & { codeHash: string; expires: Date } }
  | { type: 'ActivateUser'; data: At & { codeHash: string } }
  | { type: 'RequestPasswordReset'; data: At & { codeHash: string; expires: Date } }
  | { type: 'ResetPassword'; data: At & { codeHash: string; passwordHash: string } }
  | { type: 'ChangePassword'; data: At & { currentPasswordOk: boolean; passwordHash: string } }
  | { type: 'CreateTotpKey'; data: At & { key: string } }
  | { type: 'EnableTotp'; data: At & { key: string; timeStep: number | null; recoveryCodeHashes: string[] } }
  | { type: 'ClearTotp'; data: At & { timeStep: number | null } }
  | {
      type: 'RecordLogin';
      data: At & {
        passwordOk: boolean;
        totpGiven: boolean;
        /** The time step the given token matched, if it matched the user's key. */
        totpTimeStep: number | null;
        /** The hash of the given token, for a recovery-code match. */
        totpHash: string | null;
        address: string;
      };
    }
  | {
      type: 'UpdateProfile';
      data: At & {
        name?: string;
        jobTitle?: string;
        companyName?: string;
        experiments?: string[];
        projectsSortOrder?: ProjectsSortOrder;
        timezone?: string;
      };
    }
  | { type: 'AcceptTermsOfService'; data: At & { version: string } }
  | { type: 'AcceptEula'; data: At & { name: string; version: string } }
  | { type: 'DismissNotification'; data: At & { notification: string } }
  | { type: 'ChangePhoto'; data: At & { photo: string | null } }
  | { type: 'CreateDeveloperProfile'; data: At & { organizationId: number } }
  | { type: 'StartEnterpriseTrial'; data: At & { trialId: number; organizationId: number; expirationDate: Date; notes: string | null } }
  | { type: 'StartSubscriptionCheckout'; data: At & { checkoutId: string } }
  | { type: 'ActivateSubscription'; data: At & { checkoutId: string; periodStart: Date; periodEnd: Date } }
  | { type: 'CancelSubscription'; data: At & { reason: string | null } }
  | { type: 'UndoCancelSubscription'; data: At }
  | { type: 'EndSubscription'; data: At }
  | { type: 'DeleteUser'; data: At & { passwordOk: boolean; totpTimeStep: number | null } };

export type SubscriptionState =
  | { status: 'none' }
  | { status: 'checkout'; checkoutId: string }
  | { status: 'active'; checkoutId: string; periodStart: string; periodEnd: string }
  | { status: 'cancellation-pending'; checkoutId: string; periodStart: string; periodEnd: string }
  | { status: 'canceled' };

export interface RegisteredUser {
  status: 'registered';
  userId: number;
  username: string;
  passwordHash: string | null;
  activated: boolean;
  /** Created on someone's behalf, waiting for its third-party activation code. */
  pending: { codeHash: string } | null;
  activation: { codeHash: string; expires: string } | null;
  reset: { codeHash: string; expires: string } | null;
  sessionVersion: number;
  mfa: { pendingKey: string | null; key: string | null; recoveryCodeHashes: string[]; lastTimeStep: number };
  subscription: SubscriptionState;
  trials: number;
  developerProfileOrganizationId: number | null;
}

export type UserState = { status: 'unregistered' } | RegisteredUser | { status: 'deleted'; userId: number };

const USERNAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]{1,63}$/;

/**
 * The text rules of a user's fields (what the request schemas bound, held here too). Names and
 * titles are shown to others, so they may not hide or reorder what is read.
 */
export const USER_TEXT_RULES = {
  name: { max: 256 },
  email: { max: 320 },
  jobTitle: { max: 256, allowEmpty: true },
  companyName: { max: 256, allowEmpty: true },
  timezone: { max: 64 },
  experiment: { max: 128 },
  version: { max: 256 },
  notification: { max: 256 },
  photo: { max: 2048 },
  checkoutId: { max: 256 },
  notes: { max: 10_000, multiline: true, allowEmpty: true },
  reason: { max: 10_000, multiline: true, allowEmpty: true },
  address: { max: 256, allowEmpty: true },
} as const satisfies Record<string, TextRule>;
const MAX_EXPERIMENTS = 100;

function checkProfileTexts(c: { name?: string; jobTitle?: string | null; companyName?: string | null; email?: string }): void {
  if (c.name !== undefined) checkText(c.name.trim(), '"name"', USER_TEXT_RULES.name);
  if (c.email !== undefined) checkText(c.email, '"email"', USER_TEXT_RULES.email);
  if (c.jobTitle !== undefined) checkOptionalText(c.jobTitle, '"jobTitle"', USER_TEXT_RULES.jobTitle);
  if (c.companyName !== undefined) checkOptionalText(c.companyName, '"companyName"', USER_TEXT_RULES.companyName);
}
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function registered(state: UserState): RegisteredUser {
  if (state.status === 'registered') return state;
  throw new NotFoundError(state.status === 'deleted' ? `User ${state.userId} was deleted` : 'User not found', 'USER_NOT_FOUND');
}

const live = (code: { codeHash: string; expires: string } | null, hash: string, now: Date): boolean =>
  code !== null && code.codeHash === hash && Date.parse(code.expires) > now.getTime();

/** A TOTP match counts once: a time step at or before the last one used is a replay. */
const freshTotp = (user: RegisteredUser, timeStep: number | null): timeStep is number => timeStep !== null && timeStep > user.mfa.lastTimeStep;

export const userDecider: Decider<UserCommand, UserEvent, UserState> = {
  initialState: () => ({ status: 'unregistered' }),

  decide(command, state) {
    const at = checkDate(command.data.now, 'now');
    switch (command.type) {
      case 'RegisterUser': {
        const c = command.data;
        if (state.status !== 'unregistered') throw new ConflictError(`User ${c.userId} already exists`);
        if (!USERNAME.test(c.username)) {
          throw new ValidationError('Username must be 2 to 64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit');
        }
        if (!EMAIL.test(c.email)) throw new ValidationError(`"${c.email}" is not a valid e-mail address`);
        if (c.name.trim() === '') throw new ValidationError('Name must not be empty');
        checkProfileTexts(c);
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
              firstUser: c.firstUser,
              pending: false,
              thirdPartyCodeHash: null,
              registered: at,
            },
          },
          { type: 'ActivationCodeIssued', data: { userId: c.userId, codeHash: c.activationCode.hash, expires: checkDate(c.activationCode.expires, 'activation code expiry'), issued: at } },
        ];
      }
      case 'RegisterPendingUser': {
        const c = command.data;
        if (state.status !== 'unregistered') throw new ConflictError(`User ${c.userId} already exists`);
        if (!EMAIL.test(c.email)) throw new ValidationError(`"${c.email}" is not a valid e-mail address`);
        checkText(c.email, '"email"', USER_TEXT_RULES.email);
        if (c.name.trim() !== '') checkText(c.name.trim(), '"name"', USER_TEXT_RULES.name);
        return [
          {
            type: 'UserRegistered',
            data: {
              userId: c.userId,
              username: c.placeholderUsername,
              name: c.name.trim() || c.email,
              email: c.email,
              jobTitle: null,
              companyName: null,
              passwordHash: null,
              firstUser: false,
              pending: true,
              thirdPartyCodeHash: c.thirdPartyCodeHash,
              registered: at,
            },
          },
        ];
      }
      case 'ActivatePendingUser': {
        const user = registered(state);
        const c = command.data;
        if (user.pending === null || user.pending.codeHash !== c.thirdPartyCodeHash) throw new ValidationError('Invalid activation code', 'INVALID_CODE');
        if (!USERNAME.test(c.username)) {
          throw new ValidationError('Username must be 2 to 64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit');
        }
        if (c.name?.trim()) checkText(c.name.trim(), '"name"', USER_TEXT_RULES.name);
        return [
          {
            type: 'UserActivated',
            data: { userId: user.userId, via: 'third-party-code', username: c.username, ...(c.name?.trim() ? { name: c.name.trim() } : {}), activated: at },
          },
          { type: 'PasswordChanged', data: { userId: user.userId, passwordHash: c.passwordHash, via: 'third-party-activation', sessionVersion: user.sessionVersion + 1, changed: at } },
        ];
      }
      case 'SetPasswordViaSso': {
        const user = registered(state);
        if (user.passwordHash !== null) throw new ConflictError('This account already has a password', 'PASSWORD_SET');
        return [{ type: 'PasswordChanged', data: { userId: user.userId, passwordHash: command.data.passwordHash, via: 'sso', sessionVersion: user.sessionVersion + 1, changed: at } }];
      }
      case 'IssueActivationCode': {
        const user = registered(state);
        if (user.activated) throw new ConflictError('This account is already activated', 'ALREADY_ACTIVATED');
        return [{ type: 'ActivationCodeIssued', data: { userId: user.userId, codeHash: command.data.codeHash, expires: checkDate(command.data.expires, 'activation code expiry'), issued: at } }];
      }
      case 'ActivateUser': {
        const user = registered(state);
        if (user.activated) throw new ConflictError('This account is already activated', 'ALREADY_ACTIVATED');
        if (!live(user.activation, command.data.codeHash, command.data.now)) throw new ValidationError('Invalid or expired activation code', 'INVALID_CODE');
        return [{ type: 'UserActivated', data: { userId: user.userId, via: 'code', activated: at } }];
      }
      case 'RequestPasswordReset': {
        const user = registered(state);
        return [{ type: 'PasswordResetRequested', data: { userId: user.userId, codeHash: command.data.codeHash, expires: checkDate(command.data.expires, 'reset code expiry'), requested: at } }];
      }
      case 'ResetPassword': {
        const user = registered(state);
        if (!live(user.reset, command.data.codeHash, command.data.now)) throw new ValidationError('Invalid or expired password reset code', 'INVALID_CODE');
        return [
          { type: 'PasswordChanged', data: { userId: user.userId, passwordHash: command.data.passwordHash, via: 'reset', sessionVersion: user.sessionVersion + 1, changed: at } },
        ];
      }
      case 'ChangePassword': {
        const user = registered(state);
        if (!command.data.currentPasswordOk) throw new UnauthorizedError('The current password is not correct', 'WRONG_PASSWORD');
        return [
          { type: 'PasswordChanged', data: { userId: user.userId, passwordHash: command.data.passwordHash, via: 'change', sessionVersion: user.sessionVersion + 1, changed: at } },
        ];
      }
      case 'CreateTotpKey': {
        const user = registered(state);
        if (user.mfa.key !== null) throw new ConflictError('MFA is already configured; clear it before creating a new key', 'MFA_CONFIGURED');
        return [{ type: 'TotpKeyCreated', data: { userId: user.userId, key: command.data.key, created: at } }];
      }
      case 'EnableTotp': {
        const user = registered(state);
        if (user.mfa.key !== null) throw new ConflictError('MFA is already configured', 'MFA_CONFIGURED');
        if (user.mfa.pendingKey === null || user.mfa.pendingKey !== command.data.key) {
          throw new ValidationError('Unknown MFA key: create a key first, then confirm it with a token from your authenticator', 'UNKNOWN_MFA_KEY');
        }
        if (!freshTotp(user, command.data.timeStep)) throw new ValidationError('Invalid TOTP token', 'INVALID_TOTP');
        return [
          { type: 'TotpEnabled', data: { userId: user.userId, recoveryCodeHashes: command.data.recoveryCodeHashes, timeStep: command.data.timeStep, enabled: at } },
        ];
      }
      case 'ClearTotp': {
        const user = registered(state);
        if (user.mfa.key === null) throw new ConflictError('MFA is not configured', 'MFA_NOT_CONFIGURED');
        if (!freshTotp(user, command.data.timeStep)) throw new ValidationError('Invalid TOTP token', 'INVALID_TOTP');
        return [{ type: 'TotpCleared', data: { userId: user.userId, cleared: at } }];
      }
      case 'RecordLogin': {
        const user = registered(state);
        const c = command.data;
        checkText(c.address, 'the client address', USER_TEXT_RULES.address);
        const failed = (reason: 'wrong-password' | 'totp-required' | 'wrong-totp'): UserEvent[] => [
          { type: 'LoginFailed', data: { userId: user.userId, reason, address: c.address, at } },
        ];
        const succeeded = (method: 'password' | 'totp' | 'recovery-code', totpTimeStep: number | null, recoveryCodeHash: string | null): UserEvent[] => [
          { type: 'LoginSucceeded', data: { userId: user.userId, method, totpTimeStep, recoveryCodeHash, address: c.address, at } },
        ];
        if (!c.passwordOk || user.passwordHash === null) return failed('wrong-password');
        if (user.mfa.key === null) return succeeded('password', null, null);
        if (!c.totpGiven) return failed('totp-required');
        if (freshTotp(user, c.totpTimeStep)) return succeeded('totp', c.totpTimeStep, null);
        if (c.totpHash !== null && user.mfa.recoveryCodeHashes.includes(c.totpHash)) return succeeded('recovery-code', null, c.totpHash);
        return failed('wrong-totp');
      }
      case 'UpdateProfile': {
        const user = registered(state);
        const { now: _now, ...changes } = command.data;
        if (changes.name !== undefined && changes.name.trim() === '') throw new ValidationError('Name must not be empty');
        checkProfileTexts(changes);
        if (changes.timezone !== undefined) checkText(changes.timezone, '"timezone"', USER_TEXT_RULES.timezone);
        if (changes.experiments !== undefined) {
          if (changes.experiments.length > MAX_EXPERIMENTS) throw new ValidationError(`"experiments": at most ${MAX_EXPERIMENTS}`);
          changes.experiments.forEach((e, i) => checkText(e, `"experiments"[${i}]`, USER_TEXT_RULES.experiment));
        }
        if (Object.keys(changes).length === 0) return [];
        return [{ type: 'UserProfileUpdated', data: { userId: user.userId, ...changes, ...(changes.name !== undefined ? { name: changes.name.trim() } : {}), updated: at } }];
      }
      case 'AcceptTermsOfService':
        checkText(command.data.version, '"version"', USER_TEXT_RULES.version);
        return [{ type: 'TermsOfServiceAccepted', data: { userId: registered(state).userId, version: command.data.version, accepted: at } }];
      case 'AcceptEula':
        checkText(command.data.name, '"name"', USER_TEXT_RULES.version);
        checkText(command.data.version, '"version"', USER_TEXT_RULES.version);
        return [{ type: 'EulaAccepted', data: { userId: registered(state).userId, name: command.data.name, version: command.data.version, accepted: at } }];
      case 'DismissNotification':
        checkText(command.data.notification, '"notification"', USER_TEXT_RULES.notification);
        return [{ type: 'NotificationDismissed', data: { userId: registered(state).userId, notification: command.data.notification, dismissed: at } }];
      case 'ChangePhoto':
        checkOptionalText(command.data.photo, '"photo"', USER_TEXT_RULES.photo);
        return [{ type: 'UserPhotoChanged', data: { userId: registered(state).userId, photo: command.data.photo, changed: at } }];
      case 'CreateDeveloperProfile': {
        const user = registered(state);
        if (user.developerProfileOrganizationId !== null) throw new ConflictError('You already have a developer profile', 'DEVELOPER_PROFILE_EXISTS');
        return [{ type: 'DeveloperProfileCreated', data: { userId: user.userId, organizationId: command.data.organizationId, created: at } }];
      }
      case 'StartEnterpriseTrial': {
        const user = registered(state);
        if (user.trials > 0) throw new ConflictError('An enterprise trial can be started only once per user', 'TRIAL_USED');
        const c = command.data;
        if (c.expirationDate.getTime() <= c.now.getTime()) throw new ValidationError('The trial expiration date must be in the future');
        checkDate(c.expirationDate, '"expirationDate"');
        checkOptionalText(c.notes, '"notes"', USER_TEXT_RULES.notes);
        return [
          {
            type: 'EnterpriseTrialStarted',
            data: { userId: user.userId, trialId: c.trialId, organizationId: c.organizationId, expirationDate: c.expirationDate.toISOString(), notes: c.notes, created: at },
          },
        ];
      }
      case 'StartSubscriptionCheckout': {
        const user = registered(state);
        const s = user.subscription;
        if (s.status === 'canceled') throw new ConflictError('A canceled subscription cannot be reactivated', 'SUBSCRIPTION_CANCELED');
        if (s.status === 'active' || s.status === 'cancellation-pending') throw new ConflictError('You already have an active subscription', 'SUBSCRIPTION_ACTIVE');
        checkText(command.data.checkoutId, '"checkoutId"', USER_TEXT_RULES.checkoutId);
        return [{ type: 'SubscriptionCheckoutStarted', data: { userId: user.userId, checkoutId: command.data.checkoutId, started: at } }];
      }
      case 'ActivateSubscription': {
        const user = registered(state);
        const s = user.subscription;
        const c = command.data;
        // A payment notification delivered twice changes nothing.
        if ((s.status === 'active' || s.status === 'cancellation-pending') && s.checkoutId === c.checkoutId) return [];
        if (s.status === 'canceled') throw new ConflictError('A canceled subscription cannot be reactivated', 'SUBSCRIPTION_CANCELED');
        if (s.status !== 'checkout' || s.checkoutId !== c.checkoutId) throw new ValidationError(`Unknown checkout ${c.checkoutId}`, 'UNKNOWN_CHECKOUT');
        if (c.periodEnd.getTime() <= c.periodStart.getTime()) throw new ValidationError('The billing period must end after it starts');
        checkDate(c.periodStart, '"periodStart"');
        checkDate(c.periodEnd, '"periodEnd"');
        return [
          {
            type: 'SubscriptionActivated',
            data: { userId: user.userId, checkoutId: c.checkoutId, tier: 'professional', periodStart: c.periodStart.toISOString(), periodEnd: c.periodEnd.toISOString() },
          },
        ];
      }
      case 'CancelSubscription': {
        const user = registered(state);
        const s = user.subscription;
        if (s.status === 'cancellation-pending') throw new ConflictError('The subscription is already set to be canceled at the end of the billing period');
        if (s.status !== 'active') throw new ConflictError('There is no active subscription to cancel', 'NO_SUBSCRIPTION');
        checkOptionalText(command.data.reason, '"reason"', USER_TEXT_RULES.reason);
        return [{ type: 'SubscriptionCancellationRequested', data: { userId: user.userId, reason: command.data.reason, requested: at, effective: s.periodEnd } }];
      }
      case 'UndoCancelSubscription': {
        const user = registered(state);
        const s = user.subscription;
        if (s.status === 'canceled') throw new ConflictError('A canceled subscription cannot be reactivated', 'SUBSCRIPTION_CANCELED');
        if (s.status !== 'cancellation-pending') throw new ConflictError('The subscription is not set to be canceled', 'NOT_CANCELING');
        if (Date.parse(s.periodEnd) <= command.data.now.getTime()) throw new ConflictError('The billing period has ended: the subscription can no longer be kept');
        return [{ type: 'SubscriptionCancellationUndone', data: { userId: user.userId, undone: at } }];
      }
      case 'EndSubscription': {
        // Sent by the saga when the billing period ends; a repeat, or one sent early, does nothing.
        if (state.status !== 'registered') return [];
        const s = state.subscription;
        if (s.status !== 'cancellation-pending' || Date.parse(s.periodEnd) > command.data.now.getTime()) return [];
        return [{ type: 'SubscriptionCanceled', data: { userId: state.userId, canceled: at } }];
      }
      case 'DeleteUser': {
        const user = registered(state);
        if (!command.data.passwordOk) throw new UnauthorizedError('The password is not correct', 'WRONG_PASSWORD');
        if (user.mfa.key !== null && !freshTotp(user, command.data.totpTimeStep)) {
          throw new ForbiddenError('A valid TOTP token is needed to delete an account with MFA', 'TOTP_REQUIRED');
        }
        return [{ type: 'UserDeleted', data: { userId: user.userId, deleted: at } }];
      }
      default:
        return assertNever(command);
    }
  },

  evolve(state, event) {
    if (event.type === 'UserRegistered') {
      const d = event.data;
      return {
        status: 'registered',
        userId: d.userId,
        username: d.username,
        passwordHash: d.passwordHash,
        activated: false,
        pending: d.pending && d.thirdPartyCodeHash !== null ? { codeHash: d.thirdPartyCodeHash } : null,
        activation: null,
        reset: null,
        sessionVersion: 0,
        mfa: { pendingKey: null, key: null, recoveryCodeHashes: [], lastTimeStep: -1 },
        subscription: { status: 'none' },
        trials: 0,
        developerProfileOrganizationId: null,
      };
    }
    if (event.type === 'UserDeleted') return { status: 'deleted', userId: event.data.userId };
    if (state.status !== 'registered') return state;
    switch (event.type) {
      case 'ActivationCodeIssued':
        return { ...state, activation: { codeHash: event.data.codeHash, expires: event.data.expires } };
      case 'UserActivated':
        return { ...state, activated: true, activation: null, pending: null, username: event.data.username ?? state.username };
      case 'PasswordResetRequested':
        return { ...state, reset: { codeHash: event.data.codeHash, expires: event.data.expires } };
      case 'PasswordChanged':
        return { ...state, passwordHash: event.data.passwordHash, sessionVersion: event.data.sessionVersion, reset: null };
      case 'TotpKeyCreated':
        return { ...state, mfa: { ...state.mfa, pendingKey: event.data.key } };
      case 'TotpEnabled':
        return {
          ...state,
          mfa: { pendingKey: null, key: state.mfa.pendingKey, recoveryCodeHashes: event.data.recoveryCodeHashes, lastTimeStep: event.data.timeStep },
        };
      case 'TotpCleared':
        return { ...state, mfa: { pendingKey: null, key: null, recoveryCodeHashes: [], lastTimeStep: state.mfa.lastTimeStep } };
      case 'LoginSucceeded': {
        const d = event.data;
        return {
          ...state,
          mfa: {
            ...state.mfa,
            lastTimeStep: d.totpTimeStep ?? state.mfa.lastTimeStep,
            recoveryCodeHashes: state.mfa.recoveryCodeHashes.filter((h) => h !== d.recoveryCodeHash),
          },
        };
      }
      case 'SubscriptionCheckoutStarted':
        return { ...state, subscription: { status: 'checkout', checkoutId: event.data.checkoutId } };
      case 'SubscriptionActivated':
        return {
          ...state,
          subscription: { status: 'active', checkoutId: event.data.checkoutId, periodStart: event.data.periodStart, periodEnd: event.data.periodEnd },
        };
      case 'SubscriptionCancellationRequested':
        return state.subscription.status === 'active' ? { ...state, subscription: { ...state.subscription, status: 'cancellation-pending' } } : state;
      case 'SubscriptionCancellationUndone':
        return state.subscription.status === 'cancellation-pending' ? { ...state, subscription: { ...state.subscription, status: 'active' } } : state;
      case 'SubscriptionCanceled':
        return { ...state, subscription: { status: 'canceled' } };
      case 'DeveloperProfileCreated':
        return { ...state, developerProfileOrganizationId: event.data.organizationId };
      case 'EnterpriseTrialStarted':
        return { ...state, trials: state.trials + 1 };
      case 'LoginFailed':
      case 'UserProfileUpdated':
      case 'TermsOfServiceAccepted':
      case 'EulaAccepted':
      case 'NotificationDismissed':
      case 'UserPhotoChanged':
        return state;
      default:
        return assertNever(event);
    }
  },
};

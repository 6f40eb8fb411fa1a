import type { DomainEvent } from '../shared/decider';

export const userStream = (userId: number): string => `user-${userId}`;

/**
 * Logins that change nothing the user's decisions depend on (a password login, a failure) are
 * audit records: they go to a stream of their own, so the user's stream, read for every command,
 * does not grow with every login. TOTP and recovery-code logins change state and stay on `user-{id}`.
 */
export const loginStream = (userId: number): string => `logins-${userId}`;

export const PROJECTS_SORT_ORDERS = ['created-asc', 'created-desc', 'added-asc', 'added-desc', 'name-asc', 'name-desc', 'last-accessed-desc'] as const;
export type ProjectsSortOrder = (typeof PROJECTS_SORT_ORDERS)[number];

export type UserRegistered = DomainEvent<
  'UserRegistered',
  {
    userId: number;
    username: string;
    // Personal data: sealed with the user's key before it reaches the log (see personalData.ts).
    name: string;
    email: string;
    jobTitle: string | null;
    companyName: string | null;
    /** scrypt hash; null for a user who signs in through an identity provider. */
    passwordHash: string | null;
    /** The first user of an installation is staff. */
    firstUser: boolean;
    /** Created on someone's behalf (an invitation): activated later with a third-party code. */
    pending: boolean;
    /** SHA-256 of the third-party activation code of a pending user. */
    thirdPartyCodeHash: string | null;
    registered: string;
  }
>;

/** A fresh activation code; the earlier one stops working. Only the code's hash is kept. */
export type ActivationCodeIssued = DomainEvent<'ActivationCodeIssued', { userId: number; codeHash: string; expires: string; issued: string }>;
/** A pending user activated with a third-party code also chooses their username (and name) then. */
export type UserActivated = DomainEvent<
  'UserActivated',
  { userId: number; via: 'code' | 'third-party-code'; username?: string; name?: string; activated: string }
>;
export type PasswordResetRequested = DomainEvent<'PasswordResetRequested', { userId: number; codeHash: string; expires: string; requested: string }>;
/** Ends every session issued before it: tokens carry the session version they were issued under. */
export type PasswordChanged = DomainEvent<
  'PasswordChanged',
  { userId: number; passwordHash: string; via: 'change' | 'reset' | 'sso' | 'third-party-activation'; sessionVersion: number; changed: string }
>;
/** A TOTP key created but not yet confirmed; sealed in the log (it must be usable to verify tokens). */
export type TotpKeyCreated = DomainEvent<'TotpKeyCreated', { userId: number; key: string; created: string }>;
export type TotpEnabled = DomainEvent<'TotpEnabled', { userId: number; recoveryCodeHashes: string[]; timeStep: number; enabled: string }>;
export type TotpCleared = DomainEvent<'TotpCleared', { userId: number; cleared: string }>;
export type LoginSucceeded = DomainEvent<
  'LoginSucceeded',
  { userId: number; method: 'password' | 'totp' | 'recovery-code'; totpTimeStep: number | null; recoveryCodeHash: string | null; address: string; at: string }
>;
export type LoginFailed = DomainEvent<
  'LoginFailed',
  { userId: number; reason: 'wrong-password' | 'totp-required' | 'wrong-totp'; address: string; at: string }
>;
export type UserProfileUpdated = DomainEvent<
  'UserProfileUpdated',
  {
    userId: number;
    // Only the fields that changed are present; name, job title and company are sealed.
    name?: string;
    jobTitle?: string;
    companyName?: string;
    experiments?: string[];
    projectsSortOrder?: ProjectsSortOrder;
    timezone?: string;
    updated: string;
  }
>;
export type TermsOfServiceAccepted = DomainEvent<'TermsOfServiceAccepted', { userId: number; version: string; accepted: string }>;
export type EulaAccepted = DomainEvent<'EulaAccepted', { userId: number; name: string; version: string; accepted: string }>;
export type NotificationDismissed = DomainEvent<'NotificationDismissed', { userId: number; notification: string; dismissed: string }>;
/** `photo` is the blob address of the picture, sealed; null when it was removed. */
export type UserPhotoChanged = DomainEvent<'UserPhotoChanged', { userId: number; photo: string | null; changed: string }>;
export type DeveloperProfileCreated = DomainEvent<'DeveloperProfileCreated', { userId: number; organizationId: number; created: string }>;
export type EnterpriseTrialStarted = DomainEvent<
  'EnterpriseTrialStarted',
  { userId: number; trialId: number; organizationId: number; expirationDate: string; notes: string | null; created: string }
>;
export type SubscriptionCheckoutStarted = DomainEvent<'SubscriptionCheckoutStarted', { userId: number; checkoutId: string; started: string }>;
export type SubscriptionActivated = DomainEvent<
  'SubscriptionActivated',
  { userId: number; checkoutId: string; tier: 'professional'; periodStart: string; periodEnd: string }
>;
export type SubscriptionCancellationRequested = DomainEvent<
  'SubscriptionCancellationRequested',
  { userId: number; reason: string | null; requested: string; effective: string }
>;
export type SubscriptionCancellationUndone = DomainEvent<'SubscriptionCancellationUndone', { userId: number; undone: string }>;
export type SubscriptionCanceled = DomainEvent<'SubscriptionCanceled', { userId: number; canceled: string }>;
export type UserDeleted = DomainEvent<'UserDeleted', { userId: number; deleted: string }>;

export type UserEvent =
  | UserRegistered
  | ActivationCodeIssued
  | UserActivated
  | PasswordResetRequested
  | PasswordChanged
  | TotpKeyCreated
  | TotpEnabled
  | TotpCleared
  | LoginSucceeded
  | LoginFailed
  | UserProfileUpdated
  | TermsOfServiceAccepted
  | EulaAccepted
  | NotificationDismissed
  | UserPhotoChanged
  | DeveloperProfileCreated
  | EnterpriseTrialStarted
  | SubscriptionCheckoutStarted
  | SubscriptionActivated
  | SubscriptionCancellationRequested
  | SubscriptionCancellationUndone
  | SubscriptionCanceled
  | UserDeleted;

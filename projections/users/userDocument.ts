import type { ProjectsSortOrder } from '../../domain/user/userEvents';
import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

export interface UserSubscriptionView {
  status: 'none' | 'checkout' | 'active' | 'cancellation-pending' | 'canceled';
  periodStart: string | null;
  periodEnd: string | null;
  cancellationRequestDate: string | null;
  terminationDate: string | null;
}

/** The `users` read model: one document per user, personal data already opened. */
export interface UserDocument {
  _id: number;
  id: number;
  username: string;
  usernameLower: string;
  /** Null once the user's key was destroyed. */
  name: string | null;
  email: string | null;
  emailLower: string | null;
  jobTitle: string | null;
  companyName: string | null;
  created: string;
  /** The first user of the installation. */
  firstUser: boolean;
  activated: boolean;
  pending: boolean;
  /** SHA-256 of a pending user's third-party activation code, for lookup by code; null once activated. */
  thirdPartyCodeHash: string | null;
  mfaConfigured: boolean;
  passwordConfigured: boolean;
  /** Tokens issued under an older version were issued before a password change: refused. */
  sessionVersion: number;
  suspended: boolean;
  tier: 'free' | 'community-plus' | 'professional' | 'enterprise';
  photo: string | null;
  experiments: string[];
  projectsSortOrder: ProjectsSortOrder;
  timezone: string | null;
  dismissedNotifications: string[];
  lastAcceptedTermsOfService: { version: string; acceptanceDate: string } | null;
  /** EULA name → accepted version. */
  eulas: Record<string, string>;
  subscription: UserSubscriptionView;
  developerProfileOrganizationId: number | null;
  lastSeen: string | null;
  _position: string;
  [key: string]: unknown;
}

export const USERS = 'users';

/** The `trials` read model: enterprise trials, per user. */
export interface TrialDocument {
  _id: number;
  id: number;
  userId: number;
  organizationId: number;
  created: string;
  expirationDate: string;
  notes: string | null;
  expiredDate: string | null;
  deletedDate: string | null;
  upgradedDate: string | null;
  _position: string;
  [key: string]: unknown;
}

export const TRIALS = 'trials';

/** Log-in by user name or e-mail, the owner of a photo, third-party sign-ups, and subscriptions due to end. */
export const USER_INDEXES: readonly IndexDeclaration[] = [
  { keys: { usernameLower: 1 } },
  { keys: { emailLower: 1 } },
  { keys: { photo: 1 } },
  { keys: { thirdPartyCodeHash: 1 } },
  { keys: { 'subscription.status': 1, 'subscription.terminationDate': 1 } },
];
/** A user's trials in order. */
export const TRIAL_INDEXES: readonly IndexDeclaration[] = [{ keys: { userId: 1, created: 1, _id: 1 } }];


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
  activated: boolean;
  pending: boolean;
  mfaConfigured: boolean;
  passwordConfigured: boolean;
  suspended: boolean;
  tier: 'free' | 'community-plus' | 'professional' | 'enterprise';
  _position: string;
  [key: string]: unknown;
}

export const USERS = 'users';

import type { DomainEvent } from '../shared/decider';

export const userStream = (userId: number): string => `user-${userId}`;

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
    registered: string;
  }
>;

export type UserEvent = UserRegistered;

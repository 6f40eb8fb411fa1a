import type { DomainEvent } from '../shared/decider';

export const emailStream = (emailId: number): string => `email-${emailId}`;

export type EmailQueued = DomainEvent<
  'EmailQueued',
  {
    emailId: number;
    /** The user the mail is about or for; null for mail to an address with no account (e.g. support). */
    userId: number | null;
    projectId: number | null;
    from: string;
    // Personal data: sealed before it reaches the log, under the user's key or the e-mail's own
    // (see personalData.ts). Read back as null once that key was destroyed.
    to: string;
    subject: string;
    bodyText: string;
    bodyHTML: string;
    queued: string;
  }
>;

export type EmailSent = DomainEvent<'EmailSent', { emailId: number; providerResponse: string; sent: string }>;

export type EmailNotSent = DomainEvent<'EmailNotSent', { emailId: number; reason: string; at: string }>;

export type EmailEvent = EmailQueued | EmailSent | EmailNotSent;

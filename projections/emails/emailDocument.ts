import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

/** The `emails` read model: one document per e-mail, its personal data already opened. */
export interface EmailDocument {
  _id: number;
  id: number;
  userId: number | null;
  projectId: number | null;
  from: string;
  /** Null once the key that sealed them was destroyed (crypto-shredding). */
  to: string | null;
  created: string;
  subject: string;
  bodyText: string | null;
  bodyHTML: string | null;
  sent: boolean;
  /** The server's response once sent; the reason once it was not; '' while it waits for the saga. */
  providerResponse: string;
  _position: string;
  [key: string]: unknown;
}

export const EMAILS = 'emails';

/** A user's e-mails and all e-mails, newest first. */
export const EMAIL_INDEXES: readonly IndexDeclaration[] = [{ keys: { userId: 1, created: -1, _id: -1 } }, { keys: { created: -1, _id: -1 } }];


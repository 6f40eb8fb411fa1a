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

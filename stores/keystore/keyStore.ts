// Keys that seal personal data and secrets in the log, kept outside the log. Destroying a
// subject's key is how a deleted user is forgotten: every replay then finds their data unreadable.

export interface KeyStore {
  /** The subject's 32-byte key, created on first use. */
  getOrCreate(subject: string): Promise<Buffer>;
  /** The subject's key, or undefined when it never existed or was destroyed. */
  get(subject: string): Promise<Buffer | undefined>;
  destroy(subject: string): Promise<void>;
  close(): Promise<void>;
}

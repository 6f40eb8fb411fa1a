// Keys that seal personal data and secrets in the log, kept outside the log. Destroying a
// subject's key is how a deleted user is forgotten: every replay then finds their data unreadable.

export interface KeyStore {
  /** The subject's 32-byte key, created on first use. */
  getOrCreate(subject: string): Promise<Buffer>;
  /** The subject's key, or undefined when it never existed or was destroyed. */
  get(subject: string): Promise<Buffer | undefined>;
  /** Destroys the key, remembering that it was destroyed on purpose (wasDestroyed). */
  destroy(subject: string): Promise<void>;
  /** Whether the subject's key was destroyed on purpose (forgotten), rather than never made or lost. */
  wasDestroyed(subject: string): Promise<boolean>;
  close(): Promise<void>;
}

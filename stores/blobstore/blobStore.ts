// The blob store port: sample files, content-addressed by SHA-256. `put` resolves only once the
// bytes are durable, so a file can be acknowledged as soon as its event is appended afterwards.
import type { Readable } from 'node:stream';

export interface BlobInfo {
  /** Lowercase hex SHA-256 of the content: the blob's address. */
  sha256: string;
  size: number;
}

export type BlobSource = Buffer | Uint8Array | AsyncIterable<Uint8Array> | Readable;

export interface BlobStore {
  /**
   * Streams the content into the store, hashing it on the way; memory does not grow with its size.
   * Storing content that is already there is a no-op that answers the same info.
   * Throws BlobTooLargeError (and keeps nothing) past `maxBytes`.
   */
  put(source: BlobSource, options?: { maxBytes?: number }): Promise<BlobInfo>;
  /**
   * Takes over a file already written (and hashed) by the caller, e.g. an upload received to disk:
   * a store on the same file system moves it into place instead of copying it. The file is gone
   * from `path` afterwards, whether it was moved, copied, or its content was already stored.
   */
  putFile(path: string, known: BlobInfo): Promise<BlobInfo>;
  /** The content as a stream; throws BlobNotFoundError for an unknown address. */
  open(sha256: string): Promise<Readable>;
  stat(sha256: string): Promise<BlobInfo | undefined>;
  /** Returns whether a blob was removed. */
  delete(sha256: string): Promise<boolean>;
  /**
   * The first, undoable step of removing content that may still be wanted: the blob is hidden from
   * reads and from `put`'s "already stored" check (a put stores it afresh), its bytes kept aside.
   * Answers whether the content is now set aside (moved now, or before).
   */
  quarantine(sha256: string): Promise<boolean>;
  /** Brings set-aside content back (a no-op when it was put afresh meanwhile or never set aside). */
  restore(sha256: string): Promise<void>;
  /** Removes set-aside content for good; live content with the same address stays. */
  purge(sha256: string): Promise<void>;
  close(): Promise<void>;
}

export class BlobNotFoundError extends Error {
  readonly code = 'BLOB_NOT_FOUND';
  constructor(readonly sha256: string) {
    super(`No blob with SHA-256 ${sha256}`);
    this.name = 'BlobNotFoundError';
  }
}

export class BlobTooLargeError extends Error {
  readonly code = 'BLOB_TOO_LARGE';
  constructor(readonly maxBytes: number) {
    super(`Content is larger than ${maxBytes} bytes`);
    this.name = 'BlobTooLargeError';
  }
}

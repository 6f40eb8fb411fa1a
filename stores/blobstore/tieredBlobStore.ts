// The embedded default's blob store: small blobs (most device samples) in SQLite, where puts share
// a WAL sync, and large ones as files, moved into place without a copy. Every read and delete
// looks at both, so where a blob lives is the store's business alone.
import type { Readable } from 'node:stream';
import { type BlobInfo, type BlobSource, type BlobStore } from './blobStore';
import type { FileBlobStore } from './fileBlobStore';
import type { SqliteBlobStore } from './sqliteBlobStore';

/** At most this many bytes go to the small tier: the bodies the ingestion API receives in memory. */
export const SMALL_BLOB_BYTES = 1024 * 1024;

export class TieredBlobStore implements BlobStore {
  constructor(
    private readonly small: SqliteBlobStore,
    private readonly large: FileBlobStore,
    private readonly threshold = SMALL_BLOB_BYTES,
  ) {}

  async put(source: BlobSource, options: { maxBytes?: number } = {}): Promise<BlobInfo> {
    // Streams are of unknown length: they go to files, which do not hold them in memory.
    // The same content may end up in both tiers (put once as a stream, once as bytes): harmless,
    // reads prefer the small tier and a delete removes both.
    if (source instanceof Uint8Array && source.byteLength <= this.threshold) return this.small.put(source, options);
    return this.large.put(source, options);
  }

  async putFile(path: string, known: BlobInfo): Promise<BlobInfo> {
    if (known.size <= this.threshold) return this.small.putFile(path, known);
    return this.large.putFile(path, known);
  }

  async open(sha256: string): Promise<Readable> {
    return this.small.has(sha256) ? this.small.open(sha256) : this.large.open(sha256);
  }

  async stat(sha256: string): Promise<BlobInfo | undefined> {
    return (await this.small.stat(sha256)) ?? (await this.large.stat(sha256));
  }

  async delete(sha256: string): Promise<boolean> {
    const [small, large] = await Promise.all([this.small.delete(sha256), this.large.delete(sha256)]);
    return small || large;
  }

  async quarantine(sha256: string): Promise<boolean> {
    const [small, large] = await Promise.all([this.small.quarantine(sha256), this.large.quarantine(sha256)]);
    return small || large;
  }

  async restore(sha256: string): Promise<void> {
    await Promise.all([this.small.restore(sha256), this.large.restore(sha256)]);
  }

  async purge(sha256: string): Promise<void> {
    await Promise.all([this.small.purge(sha256), this.large.purge(sha256)]);
  }

  async close(): Promise<void> {
    await Promise.all([this.small.close(), this.large.close()]);
  }
}

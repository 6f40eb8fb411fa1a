// The embedded default's blob store: small blobs (most device samples) in SQLite, where puts share
// a WAL sync, and large ones as files, moved into place without a copy. Every read and delete
// looks at every tier, so where a blob lives is the store's business alone. A data folder from
// before the small blobs moved into the log's file keeps its `blobs.sqlite` as a tier that is read,
// deleted from and set aside in, and never put to again.
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
    /** The small blobs of the layout before (their own file), when the data folder has one. */
    private readonly earlier?: SqliteBlobStore,
  ) {}

  private get tiers(): readonly BlobStore[] {
    return this.earlier ? [this.small, this.earlier, this.large] : [this.small, this.large];
  }

  private async every<T>(each: (tier: BlobStore) => Promise<T>): Promise<T[]> {
    return Promise.all(this.tiers.map(each));
  }

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
    if (this.small.has(sha256)) return this.small.open(sha256);
    if (this.earlier?.has(sha256)) return this.earlier.open(sha256);
    return this.large.open(sha256);
  }

  async stat(sha256: string): Promise<BlobInfo | undefined> {
    for (const tier of this.tiers) {
      const info = await tier.stat(sha256);
      if (info) return info;
    }
    return undefined;
  }

  async delete(sha256: string): Promise<boolean> {
    return (await this.every((tier) => tier.delete(sha256))).some(Boolean);
  }

  async quarantine(sha256: string): Promise<boolean> {
    return (await this.every((tier) => tier.quarantine(sha256))).some(Boolean);
  }

  async restore(sha256: string): Promise<void> {
    await this.every((tier) => tier.restore(sha256));
  }

  async purge(sha256: string): Promise<void> {
    await this.every((tier) => tier.purge(sha256));
  }

  async close(): Promise<void> {
    await this.every((tier) => tier.close());
  }
}

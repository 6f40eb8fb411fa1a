// The production blob store in MongoDB GridFS (CI runs it on FerretDB), one GridFS file per blob
// named by its SHA-256. The hash is known only at the end, so a put uploads under a temporary name
// and then renames; no transactions are needed. Two concurrent puts of the same content may both
// rename, leaving two files with the same name and bytes: reads take either, delete removes all.
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { GridFSBucket, MongoClient, type GridFSBucketWriteStream, type GridFSFile } from 'mongodb';
import { BlobNotFoundError, BlobTooLargeError, type BlobInfo, type BlobSource, type BlobStore } from './blobStore';
import { chunksOf } from './fileBlobStore';

const DEFAULT_DB = 'edgeml_blobs';
const BUCKET = 'blobs';
const TEMP_PREFIX = 'tmp-';
/** Quarantined blobs are renamed to this prefix and their address. */
const QUARANTINE_PREFIX = 'quarantine-';
/** Temp files older than this are leftovers of a crash between upload and rename, not puts in flight. */
const STALE_TEMP_MS = 60 * 60 * 1000;
const SHA256 = /^[0-9a-f]{64}$/;

function write(upload: GridFSBucketWriteStream, chunk: Uint8Array): Promise<void> {
  // Waiting for each chunk keeps memory flat and means no chunk insert is in flight when we abort.
  return new Promise((resolve, reject) => upload.write(chunk, (error) => (error ? reject(error) : resolve())));
}

export class GridFsBlobStore implements BlobStore {
  private constructor(
    private readonly client: MongoClient,
    private readonly bucket: GridFSBucket,
  ) {}

  static async connect(url: string, dbName: string = DEFAULT_DB): Promise<GridFsBlobStore> {
    const client = await MongoClient.connect(url);
    const store = new GridFsBlobStore(client, new GridFSBucket(client.db(dbName), { bucketName: BUCKET }));
    await store.removeStaleTempFiles();
    return store;
  }

  private async removeStaleTempFiles(): Promise<void> {
    // Other processes share the bucket, so only old temp files are known to be abandoned.
    const stale = this.bucket.find({
      filename: { $regex: `^${TEMP_PREFIX}` },
      uploadDate: { $lt: new Date(Date.now() - STALE_TEMP_MS) },
    });
    for await (const file of stale) await this.bucket.delete(file._id);
  }

  async put(source: BlobSource, options: { maxBytes?: number } = {}): Promise<BlobInfo> {
    const upload = this.bucket.openUploadStream(`${TEMP_PREFIX}${randomUUID()}`);
    // Errors surface through the write callbacks and `finished`; this keeps them from being unhandled.
    upload.on('error', () => {});
    const hash = createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of chunksOf(source)) {
        size += chunk.byteLength;
        if (options.maxBytes !== undefined && size > options.maxBytes) throw new BlobTooLargeError(options.maxBytes);
        hash.update(chunk);
        await write(upload, chunk);
      }
      upload.end();
      await finished(upload);
    } catch (error) {
      await this.discard(upload);
      throw error;
    }
    const sha256 = hash.digest('hex');
    const existing = await this.bucket.find({ filename: sha256 }).limit(1).toArray();
    if (existing.length > 0) {
      await this.bucket.delete(upload.id);
    } else {
      await this.bucket.rename(upload.id, sha256);
    }
    return { sha256, size };
  }

  /** Drops a failed upload: before it ended, abort deletes its chunks; after, the whole file goes. */
  private async discard(upload: GridFSBucketWriteStream): Promise<void> {
    try {
      if (upload.writableEnded) await this.bucket.delete(upload.id);
      else await upload.abort();
    } catch {
      // Best effort: the caller's error is the one worth reporting; leftovers are cleaned on connect.
    } finally {
      upload.destroy();
    }
  }

  /** GridFS is another store: the file is copied in, then removed. */
  async putFile(path: string, _known: BlobInfo): Promise<BlobInfo> {
    const info = await this.put(createReadStream(path));
    await rm(path, { force: true });
    return info;
  }

  async open(sha256: string): Promise<Readable> {
    const file = await this.file(sha256);
    if (!file) throw new BlobNotFoundError(sha256);
    return this.bucket.openDownloadStream(file._id);
  }

  async stat(sha256: string): Promise<BlobInfo | undefined> {
    const file = await this.file(sha256);
    return file ? { sha256, size: file.length } : undefined;
  }

  private async file(sha256: string): Promise<GridFSFile | undefined> {
    if (!SHA256.test(sha256)) return undefined;
    const [file] = await this.bucket.find({ filename: sha256 }).limit(1).toArray();
    return file;
  }

  async delete(sha256: string): Promise<boolean> {
    if (!SHA256.test(sha256)) return false;
    const files = await this.bucket.find({ filename: sha256 }).toArray();
    for (const file of files) await this.bucket.delete(file._id);
    return files.length > 0;
  }

  async quarantine(sha256: string): Promise<boolean> {
    if (!SHA256.test(sha256)) return false;
    const files = await this.bucket.find({ filename: sha256 }).toArray();
    for (const file of files) await this.bucket.rename(file._id, `${QUARANTINE_PREFIX}${sha256}`);
    if (files.length > 0) return true;
    return (await this.bucket.find({ filename: `${QUARANTINE_PREFIX}${sha256}` }).limit(1).toArray()).length > 0;
  }

  async restore(sha256: string): Promise<void> {
    if (!SHA256.test(sha256)) return;
    const set = await this.bucket.find({ filename: `${QUARANTINE_PREFIX}${sha256}` }).toArray();
    const live = (await this.bucket.find({ filename: sha256 }).limit(1).toArray()).length > 0;
    for (const [i, file] of set.entries()) {
      // One copy comes back unless the content was put afresh; any others go.
      if (i === 0 && !live) await this.bucket.rename(file._id, sha256);
      else await this.bucket.delete(file._id);
    }
  }

  async purge(sha256: string): Promise<void> {
    if (!SHA256.test(sha256)) return;
    for (const file of await this.bucket.find({ filename: `${QUARANTINE_PREFIX}${sha256}` }).toArray()) await this.bucket.delete(file._id);
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

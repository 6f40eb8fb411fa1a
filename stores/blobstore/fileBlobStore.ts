// The embedded blob store: one file per blob at `dir/ab/<sha256>` (256 folders, made at open, so a
// put never creates one). A put writes into `dir/tmp/`
// and renames into place only once the bytes and the directory entry are fsynced, so a blob that is
// visible is whole and durable; a crash leaves at most a temp file, which the next open removes.
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { BlobNotFoundError, BlobTooLargeError, type BlobInfo, type BlobSource, type BlobStore } from './blobStore';

const SHA256 = /^[0-9a-f]{64}$/;
/** Where quarantined blobs wait for their purge or restore. */
const QUARANTINE = 'quarantine';

/** The source as chunks; a Buffer is one chunk, streams are read as they come. */
export async function* chunksOf(source: BlobSource): AsyncIterable<Uint8Array> {
  if (source instanceof Uint8Array) {
    yield source;
    return;
  }
  for await (const chunk of source as AsyncIterable<Uint8Array | string>) {
    yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  }
}

async function fsyncDir(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/**
 * The blob folders' handles, opened on first use and kept: syncing a folder after a rename is then
 * one call instead of open, sync and close.
 */
class FolderSyncer {
  private readonly handles = new Map<string, Promise<FileHandle>>();
  private readonly running = new Set<Promise<void>>();

  async sync(dir: string): Promise<void> {
    const run = this.handleOf(dir).then((handle) => handle.sync());
    this.running.add(run);
    try {
      await run;
    } finally {
      this.running.delete(run);
    }
  }

  private handleOf(dir: string): Promise<FileHandle> {
    let handle = this.handles.get(dir);
    if (!handle) {
      handle = open(dir, 'r');
      // A failed open is not kept: the next sync tries again.
      handle.catch(() => this.handles.delete(dir));
      this.handles.set(dir, handle);
    }
    return handle;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.running]);
    const handles = await Promise.allSettled([...this.handles.values()]);
    this.handles.clear();
    await Promise.all(handles.map((h) => (h.status === 'fulfilled' ? h.value.close() : undefined)));
  }
}

export class FileBlobStore implements BlobStore {
  private readonly folders = new FolderSyncer();

  private constructor(private readonly dir: string) {}

  static async open(dir: string): Promise<FileBlobStore> {
    const tmp = join(dir, 'tmp');
    // Whatever is in tmp/ is an unfinished put from an earlier process: it was never acknowledged.
    await rm(tmp, { recursive: true, force: true });
    await mkdir(tmp, { recursive: true });
    await mkdir(join(dir, QUARANTINE), { recursive: true });
    for (let i = 0; i < 256; i++) await mkdir(join(dir, i.toString(16).padStart(2, '0')), { recursive: true });
    await fsyncDir(dir);
    return new FileBlobStore(dir);
  }

  private pathOf(sha256: string): string {
    return join(this.dir, sha256.slice(0, 2), sha256);
  }

  async put(source: BlobSource, options: { maxBytes?: number } = {}): Promise<BlobInfo> {
    if (source instanceof Uint8Array) return this.putBytes(source, options);
    const tmpPath = join(this.dir, 'tmp', randomUUID());
    const hash = createHash('sha256');
    let size = 0;
    let placed = false;
    try {
      const handle = await open(tmpPath, 'wx');
      let sha256: string;
      try {
        for await (const chunk of chunksOf(source)) {
          size += chunk.byteLength;
          if (options.maxBytes !== undefined && size > options.maxBytes) throw new BlobTooLargeError(options.maxBytes);
          hash.update(chunk);
          for (let offset = 0; offset < chunk.byteLength; ) {
            offset += (await handle.write(chunk, offset, chunk.byteLength - offset)).bytesWritten;
          }
        }
        sha256 = hash.digest('hex');
        // Content already stored (and durable): the temp copy is dropped unsynced.
        if (await this.exists(this.pathOf(sha256))) return { sha256, size };
        await handle.sync();
      } finally {
        await handle.close();
      }
      await this.place(tmpPath, sha256);
      placed = true;
      return { sha256, size };
    } finally {
      if (!placed) await rm(tmpPath, { force: true });
    }
  }

  /** Bytes in hand: hashed first, so content already stored costs one stat and no write. */
  private async putBytes(bytes: Uint8Array, options: { maxBytes?: number }): Promise<BlobInfo> {
    if (options.maxBytes !== undefined && bytes.byteLength > options.maxBytes) throw new BlobTooLargeError(options.maxBytes);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const info = { sha256, size: bytes.byteLength };
    if (await this.exists(this.pathOf(sha256))) return info;
    const tmpPath = join(this.dir, 'tmp', randomUUID());
    let placed = false;
    try {
      const handle = await open(tmpPath, 'wx');
      try {
        for (let offset = 0; offset < bytes.byteLength; ) {
          offset += (await handle.write(bytes, offset, bytes.byteLength - offset)).bytesWritten;
        }
        await handle.sync();
      } finally {
        await handle.close();
      }
      await this.place(tmpPath, sha256);
      placed = true;
      return info;
    } finally {
      if (!placed) await rm(tmpPath, { force: true });
    }
  }

  async putFile(path: string, known: BlobInfo): Promise<BlobInfo> {
    if (!SHA256.test(known.sha256)) throw new Error(`Not a SHA-256: ${known.sha256}`);
    if (await this.exists(this.pathOf(known.sha256))) {
      await rm(path, { force: true });
      return { sha256: known.sha256, size: known.size };
    }
    const handle = await open(path, 'r+');
    try {
      if ((await handle.stat()).size !== known.size) throw new Error(`${path} is not ${known.size} bytes long`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await this.place(path, known.sha256);
    } catch (error) {
      // Another file system: copy it in the ordinary way.
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      const info = await this.put(createReadStream(path));
      await rm(path, { force: true });
      return info;
    }
    return { sha256: known.sha256, size: known.size };
  }

  /** Renames a synced file into place; a rename is durable once its folder is synced. */
  private async place(file: string, sha256: string): Promise<void> {
    const target = this.pathOf(sha256);
    await rename(file, target);
    await this.folders.sync(dirname(target));
  }

  private async exists(path: string): Promise<boolean> {
    try {
      await stat(path);
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  async open(sha256: string): Promise<Readable> {
    if (!SHA256.test(sha256)) throw new BlobNotFoundError(sha256);
    try {
      // Opening before streaming turns a missing blob into an error here rather than on the stream.
      const handle = await open(this.pathOf(sha256), 'r');
      return handle.createReadStream();
    } catch (error) {
      if (isNotFound(error)) throw new BlobNotFoundError(sha256);
      throw error;
    }
  }

  async stat(sha256: string): Promise<BlobInfo | undefined> {
    if (!SHA256.test(sha256)) return undefined;
    try {
      const info = await stat(this.pathOf(sha256));
      return { sha256, size: info.size };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async delete(sha256: string): Promise<boolean> {
    if (!SHA256.test(sha256)) return false;
    try {
      await unlink(this.pathOf(sha256));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  private quarantined(sha256: string): string {
    return join(this.dir, QUARANTINE, sha256);
  }

  async quarantine(sha256: string): Promise<boolean> {
    if (!SHA256.test(sha256)) return false;
    try {
      await rename(this.pathOf(sha256), this.quarantined(sha256));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return this.exists(this.quarantined(sha256));
    }
    await Promise.all([this.folders.sync(join(this.dir, QUARANTINE)), this.folders.sync(dirname(this.pathOf(sha256)))]);
    return true;
  }

  async restore(sha256: string): Promise<void> {
    if (!SHA256.test(sha256) || !(await this.exists(this.quarantined(sha256)))) return;
    // Put afresh meanwhile: the live copy is the same content.
    if (await this.exists(this.pathOf(sha256))) {
      await rm(this.quarantined(sha256), { force: true });
      return;
    }
    await this.place(this.quarantined(sha256), sha256);
  }

  async purge(sha256: string): Promise<void> {
    if (SHA256.test(sha256)) await rm(this.quarantined(sha256), { force: true });
  }

  async close(): Promise<void> {
    await this.folders.close();
  }
}

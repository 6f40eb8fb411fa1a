import { createHash } from 'node:crypto';
import { createReadStream, writeSync } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ValidationError } from '../domain/shared/errors';
import type { SampleSource } from '../domain/sample/formats/sampleFormat';
import type { BlobInfo, BlobStore } from '../stores/blobstore/blobStore';
import { HashingThreadEnded, streamingSha256 } from './sha256Thread';

/** 100 MB a file, as the spec's limits say. */
export const MAX_FILE_BYTES = 100 * 1000 * 1000;

export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The file is larger than ${maxBytes / 1e6} MB`);
  }
}

/** The client went away (reset, or closed its side) before the whole body arrived. */
export class UploadAbortedError extends ValidationError {
  constructor() {
    super('The upload was aborted before the body was complete', 'UPLOAD_ABORTED');
  }
}

/** Whether `error`, thrown while reading `body`, means the client cut the connection. */
export function isAbortOf(body: Readable, error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return body.readableAborted && (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNABORTED');
}

/**
 * Bytes written between two syncs of a file being received. The kernel would otherwise write none
 * of it to disk before the sync that makes it durable (the blob store's, once it is whole), and
 * 100 MB of dirty pages then took that sync's whole time after the last byte arrived.
 */
export const WRITE_BEHIND_BYTES = 8 * 1024 * 1024;

/**
 * Streams `source` into a new file, each chunk that `keep` says to (it may make the reading wait,
 * or throw); on any failure nothing is left of the file.
 * Each chunk is written at once, synchronously: a write into the page cache costs less than handing
 * it to the thread pool (a 100 MB upload took 20-30% longer through a write stream). A write blocks
 * only when the kernel holds too much unwritten data, so the file is synced every WRITE_BEHIND_BYTES
 * in the background, and the reading waits for that sync before going more than twice that far
 * ahead of the disk: one file never holds more than that unwritten, however slow the disk.
 */
export async function streamToFile(source: Readable, file: string, keep: (chunk: Buffer) => boolean | Promise<boolean>): Promise<void> {
  let handle: FileHandle | undefined;
  let syncing: Promise<void> | undefined;
  let writing: Promise<void> | undefined;
  const write = async (chunks: AsyncIterable<Buffer>) => {
    const out = (handle = await open(file, 'wx'));
    let unsynced = 0;
    for await (const chunk of chunks) {
      const kept = keep(chunk);
      if (!(typeof kept === 'boolean' ? kept : await kept)) continue;
      for (let offset = 0; offset < chunk.length; ) offset += writeSync(out.fd, chunk, offset, chunk.length - offset);
      unsynced += chunk.length;
      if (unsynced < WRITE_BEHIND_BYTES) continue;
      await syncing;
      unsynced = 0;
      syncing = out.datasync();
      // Its failure is reported where it is awaited; till then it must not count as unhandled.
      syncing.catch(() => {});
    }
  };
  try {
    // The pipeline takes the source's errors from this call on: a source that fails before the
    // file is open (a multipart parser destroyed by a cut connection) must not fail unheard.
    await pipeline(source, (chunks: AsyncIterable<Buffer>) => (writing = write(chunks)));
    await syncing;
  } catch (error) {
    // The pipeline may end on the source's error while the writing still opens the file: once it
    // has settled, nothing can create the file again after its removal.
    await writing?.catch(() => {});
    await syncing?.catch(() => {});
    await handle?.close().catch(() => {});
    await rm(file, { force: true });
    throw isAbortOf(source, error) ? new UploadAbortedError() : error;
  }
  await handle?.close();
}

export interface ReceivedFile {
  size: number;
  /** Where it is on disk; undefined for a body received in memory. */
  path?: string;
  sha256: string;
  /** Random access for the format parsers; close it after parsing. */
  source(): SampleSource & { close(): Promise<void> };
  /** Hands the content to the blob store: moved in when it is a file on disk, else written from memory. */
  store(blobs: BlobStore): Promise<BlobInfo>;
  remove(): Promise<void>;
}

/** A file already on disk (formidable's parts, large bodies). */
export function receivedOnDisk(filePath: string, size: number, sha256: string): ReceivedFile {
  return {
    size,
    sha256,
    path: filePath,
    source: () => fileSource(filePath, size),
    store: (blobs) => blobs.putFile(filePath, { sha256, size }),
    remove: () => rm(filePath, { force: true }),
  };
}

/** Bodies up to this size are received in memory: small samples skip the temporary file. */
export const IN_MEMORY_BODY_BYTES = 1024 * 1024;

/**
 * Receives a body: in memory when its declared length is small, else streamed to a temporary
 * file. Either way hashed and counted on the way, and refused past `maxBytes`.
 */
export async function receiveBody(body: Readable, declaredLength: number | undefined, dir: string, maxBytes = MAX_FILE_BYTES): Promise<ReceivedFile> {
  if (declaredLength === undefined || declaredLength > IN_MEMORY_BODY_BYTES) return receiveToFile(body, dir, maxBytes);
  const hash = createHash('sha256');
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      // A body longer than it declared is cut off by Node's HTTP parser; this bounds the rest.
      if (size > Math.min(maxBytes, IN_MEMORY_BODY_BYTES)) throw new FileTooLargeError(Math.min(maxBytes, IN_MEMORY_BODY_BYTES));
      hash.update(chunk as Buffer);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw isAbortOf(body, error) ? new UploadAbortedError() : error;
  }
  const bytes = Buffer.concat(chunks, size);
  return {
    size,
    sha256: hash.digest('hex'),
    source: () => ({ size, read: async (offset, length) => bytes.subarray(offset, offset + length), readAll: async () => bytes, close: async () => {} }),
    store: (blobs) => blobs.put(bytes),
    remove: async () => {},
  };
}

/**
 * Streams `source` to a new file in `dir`, counted and hashed (off the event loop) on the way:
 * memory does not grow with the file. Past `maxBytes`, `past: 'throw'` fails with
 * FileTooLargeError; `'drop'` reads the rest and discards it (a multipart part, so that the
 * request's other parts still go through) and answers the error instead of a file. Whatever fails,
 * no file is left behind.
 */
export async function receiveHashed(source: Readable, dir: string, maxBytes: number, past: 'throw' | 'drop'): Promise<ReceivedFile | FileTooLargeError> {
  const file = path.join(dir, `${randomUUID()}.part`);
  const hash = streamingSha256();
  let size = 0;
  let tooLarge = false;
  // The hashing thread died under this upload: the bytes still go to the file, hashed from it at the end.
  let hashLost = false;
  const lost = (error: unknown): true => {
    if (!(error instanceof HashingThreadEnded)) throw error;
    hashLost = true;
    return true;
  };
  try {
    await streamToFile(source, file, (chunk) => {
      size += chunk.length;
      if (tooLarge || size > maxBytes) {
        if (past === 'throw') throw new FileTooLargeError(maxBytes);
        tooLarge = true;
        return false;
      }
      if (hashLost) return true;
      try {
        return hash.update(chunk)?.then(() => true, lost) ?? true;
      } catch (error) {
        return lost(error);
      }
    });
    if (tooLarge) {
      await rm(file, { force: true });
      return new FileTooLargeError(maxBytes);
    }
    const digest = hashLost ? undefined : await hash.digest().catch((error: unknown) => void lost(error));
    return receivedOnDisk(file, size, digest ?? (await sha256OfFile(file)));
  } catch (error) {
    await rm(file, { force: true });
    throw error;
  } finally {
    // After a digest this does nothing; else the thread lets the hash go.
    hash.abandon();
  }
}

/** The SHA-256 of a file, read back (on the event loop: only when the hashing thread died). */
async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A body streamed to a temporary file (receiveHashed); past `maxBytes`, FileTooLargeError. */
export async function receiveToFile(body: Readable, dir: string, maxBytes = MAX_FILE_BYTES): Promise<ReceivedFile> {
  return (await receiveHashed(body, dir, maxBytes, 'throw')) as ReceivedFile;
}

/** Random access to a received file for the format parsers. */
export function fileSource(filePath: string, size: number): SampleSource & { close(): Promise<void> } {
  // One handle for all the parser's reads, opened on the first.
  let handle: Promise<FileHandle> | undefined;
  const file = () => (handle ??= open(filePath, 'r'));
  return {
    size,
    async read(offset, length) {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
      const { bytesRead } = await (await file()).read(buffer, 0, buffer.length, offset);
      return buffer.subarray(0, bytesRead);
    },
    async readAll() {
      const all = Buffer.alloc(size);
      const { bytesRead } = await (await file()).read(all, 0, size, 0);
      return all.subarray(0, bytesRead);
    },
    async close() {
      if (handle) await (await handle).close();
    },
  };
}

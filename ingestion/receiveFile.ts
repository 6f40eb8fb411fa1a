import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { SampleSource } from '../domain/sample/formats/sampleFormat';

/** 100 MB a file, as the spec's limits say. */
export const MAX_FILE_BYTES = 100 * 1000 * 1000;

export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The file is larger than ${maxBytes / 1e6} MB`);
  }
}

export interface ReceivedFile {
  path: string;
  size: number;
  sha256: string;
  remove(): Promise<void>;
}

/**
 * Streams a body to a temporary file, hashing and counting on the way: memory does not grow with
 * the file. Past `maxBytes` the file is removed and FileTooLargeError thrown.
 */
export async function receiveToFile(body: Readable, dir: string, maxBytes = MAX_FILE_BYTES): Promise<ReceivedFile> {
  const file = path.join(dir, `${randomUUID()}.part`);
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > maxBytes) return callback(new FileTooLargeError(maxBytes));
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  try {
    await pipeline(body, meter, createWriteStream(file));
  } catch (error) {
    await rm(file, { force: true });
    throw error;
  }
  return { path: file, size, sha256: hash.digest('hex'), remove: () => rm(file, { force: true }) };
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

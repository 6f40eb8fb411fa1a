// Received files written to disk (ingestion/receiveFile.ts streamToFile): whole and in order past
// the background syncs, only the chunks kept, and nothing left behind, nor an unheard error, when
// the source fails at any moment, even before the file is open.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { receiveHashed, streamToFile, WRITE_BEHIND_BYTES } from '../../ingestion/receiveFile';
import { endHashingThread } from '../../ingestion/sha256Thread';

describe('streamToFile', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-stream-to-file-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes every kept chunk in order, across several background syncs', async () => {
    const chunks = Array.from({ length: Math.ceil((WRITE_BEHIND_BYTES * 2.5) / 65_536) }, () => randomBytes(65_536));
    const file = path.join(dir, 'whole.part');
    let seen = 0;
    await streamToFile(Readable.from(chunks), file, () => seen++ % 5 !== 3);
    const expected = Buffer.concat(chunks.filter((_, i) => i % 5 !== 3));
    const stored = await readFile(file);
    expect(stored.length).toBe(expected.length);
    // Compared as a whole: a diff of megabytes would not help anyone.
    expect(stored.equals(expected)).toBe(true);
  });

  it('leaves no file, and rejects with the error, when the source fails before the file is open', async () => {
    const source = new PassThrough();
    const file = path.join(dir, 'early.part');
    const written = streamToFile(source, file, () => true);
    // Failed in the same turn: the file's opening has not even begun to finish.
    source.destroy(new Error('cut before anything came'));
    await expect(written).rejects.toThrow('cut before anything came');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(file)).toBe(false);
  });

  it('leaves no file when the source fails midway, or when a chunk is refused', async () => {
    const midway = new PassThrough();
    const first = streamToFile(midway, path.join(dir, 'midway.part'), () => true);
    midway.write(randomBytes(100_000));
    await new Promise((resolve) => setTimeout(resolve, 20));
    midway.destroy(new Error('cut midway'));
    await expect(first).rejects.toThrow('cut midway');

    const refused = streamToFile(Readable.from([randomBytes(10), randomBytes(10)]), path.join(dir, 'refused.part'), () => {
      throw new Error('too large');
    });
    await expect(refused).rejects.toThrow('too large');
    expect(await readdir(dir)).toEqual([]);
  });

  it('still answers the right SHA-256 when the hashing thread dies mid-upload, hashing the received file instead', async () => {
    const chunks = Array.from({ length: 300 }, () => randomBytes(65_536));
    async function* arriving() {
      for (let i = 0; i < chunks.length; i++) {
        // The thread ends (as a crash would) with a third of the file hashed.
        if (i === 100) await endHashingThread();
        yield chunks[i]!;
      }
    }
    const received = await receiveHashed(Readable.from(arriving()), dir, 100_000_000, 'throw');
    if (received instanceof Error) throw received;
    const whole = Buffer.concat(chunks);
    expect(received.size).toBe(whole.length);
    expect(received.sha256).toBe(createHash('sha256').update(whole).digest('hex'));
    await received.remove();
    // The next upload hashes on a new thread.
    const next = await receiveHashed(Readable.from([Buffer.from('next')]), dir, 100, 'throw');
    if (next instanceof Error) throw next;
    expect(next.sha256).toBe(createHash('sha256').update('next').digest('hex'));
    await next.remove();
    expect(await readdir(dir)).toEqual([]);
  });
});

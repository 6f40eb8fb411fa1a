// The upload hash computed on a worker thread through a shared ring (ingestion/sha256Thread.ts):
// it must give what node:crypto gives on the event loop, for any chunking and any number of
// uploads at once, and an idle thread must not keep a process alive.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endHashingThread, RING_BYTES, streamingSha256 } from '../../ingestion/sha256Thread';

const sha256 = (chunks: Buffer[]) => chunks.reduce((hash, chunk) => hash.update(chunk), createHash('sha256')).digest('hex');

/** Hands every chunk over as an upload does: waiting whenever the hash asks it to. */
async function threadSha256(chunks: Buffer[]): Promise<string> {
  const hash = streamingSha256();
  for (const chunk of chunks) await hash.update(chunk);
  return hash.digest();
}

describe('the SHA-256 of uploads, on a worker thread', () => {
  it('gives node:crypto\'s digest for the empty file, tiny chunks, socket-sized ones, and chunks larger than the ring', async () => {
    const cases: Buffer[][] = [
      [],
      [Buffer.from('abc')],
      Array.from({ length: 300 }, (_, i) => randomBytes(i % 7)),
      Array.from({ length: 200 }, () => randomBytes(65_536)),
      // Larger than the ring, and than half of it: copied in pieces, waiting for room.
      [randomBytes(RING_BYTES * 2 + 12_345), randomBytes(1), randomBytes(RING_BYTES / 2 + 1)],
    ];
    for (const chunks of cases) expect(await threadSha256(chunks)).toBe(sha256(chunks));
  });

  it('keeps many uploads at once apart, more than the ring holds in all, and goes on after one is dropped', async () => {
    const uploads = Array.from({ length: 12 }, (_, u) => Array.from({ length: 40 + u }, (_, i) => randomBytes(((u * 7919 + i * 104_729) % 70_000) + 1)));
    const dropped = streamingSha256();
    await dropped.update(randomBytes(100_000));
    dropped.abandon();
    const digests = await Promise.all(uploads.map((chunks) => threadSha256(chunks)));
    expect(digests).toEqual(uploads.map(sha256));
    // Dropped twice, or after its digest: nothing changes for the others.
    dropped.abandon();
    expect(await threadSha256([Buffer.from('after')])).toBe(sha256([Buffer.from('after')]));
  });

  it('fails the hashes open when the thread dies, never with a wrong digest, and hashes anew on a new thread', async () => {
    const open = streamingSha256();
    await open.update(randomBytes(1_000_000));
    // One waiting for room in the ring (16 MB in 4 MB pieces) when the thread ends: it may have been
    // hashed whole before the end, or fail; a wrong digest or a hang would be the defect.
    const big = randomBytes(RING_BYTES * 2);
    const waiting = streamingSha256();
    const feeding = waiting.update(big);
    await endHashingThread();
    await expect(open.digest()).rejects.toThrow(/hashing thread ended/);
    expect(() => open.update(Buffer.from('more'))).toThrow(/hashing thread ended/);
    const outcome = await Promise.resolve(feeding)
      .then(() => waiting.digest())
      .then((digest) => ({ digest }), (error: Error) => ({ error: error.message }));
    if ('digest' in outcome) expect(outcome.digest).toBe(sha256([big]));
    else expect(outcome.error).toMatch(/hashing thread ended/);
    // A new thread takes the next hashes, many at once.
    const uploads = Array.from({ length: 4 }, (_, u) => Array.from({ length: 20 }, (_, i) => randomBytes(1000 + u * 100 + i)));
    expect(await Promise.all(uploads.map((chunks) => threadSha256(chunks)))).toEqual(uploads.map(sha256));
  });

  it('does not keep a process alive once its hashes are done', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-sha256-'));
    try {
      const script = path.join(dir, 'hashOnce.mts');
      await writeFile(script, `import { streamingSha256 } from ${JSON.stringify(path.resolve(__dirname, '../../ingestion/sha256Thread.ts'))};
const hash = streamingSha256(); hash.update(Buffer.from('abc')); console.log(await hash.digest());\n`);
      const run = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: path.resolve(__dirname, '../..'), encoding: 'utf8', timeout: 20_000 });
      expect(run.error).toBeUndefined();
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout.trim()).toBe(sha256([Buffer.from('abc')]));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

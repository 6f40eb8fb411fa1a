import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobTooLargeError } from '../../stores/blobstore/blobStore';
import { FileBlobStore } from '../../stores/blobstore/fileBlobStore';
import { blobStoreContract } from './blobStore.contract';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'file-blob-store-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

blobStoreContract('FileBlobStore', () => FileBlobStore.open(dir));

describe('FileBlobStore on disk', () => {
  it('removes leftover temp files when it opens', async () => {
    await FileBlobStore.open(dir);
    await writeFile(join(dir, 'tmp', 'interrupted-put'), randomBytes(100));
    await FileBlobStore.open(dir);
    expect(await readdir(join(dir, 'tmp'))).toEqual([]);
  });

  it('places a blob at dir/ab/<sha256>', async () => {
    const store = await FileBlobStore.open(dir);
    const content = randomBytes(256);
    const sha256 = createHash('sha256').update(content).digest('hex');
    await store.put(content);
    expect(await readFile(join(dir, sha256.slice(0, 2), sha256))).toEqual(content);
  });

  it('leaves no temp file behind after a put, a refused put or a failed one', async () => {
    const store = await FileBlobStore.open(dir);
    const content = randomBytes(64);
    await store.put(content);
    await store.put(content);
    await expect(store.put(randomBytes(100), { maxBytes: 10 })).rejects.toBeInstanceOf(BlobTooLargeError);
    async function* failing(): AsyncIterable<Uint8Array> {
      yield randomBytes(10);
      throw new Error('source failed');
    }
    await expect(store.put(failing())).rejects.toThrow('source failed');
    expect(await readdir(join(dir, 'tmp'))).toEqual([]);
  });
});

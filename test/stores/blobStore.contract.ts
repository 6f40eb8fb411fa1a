// The blob store contract: every adapter (files on disk, GridFS) answers these alike. Tests use random
// content, so they do not depend on what earlier tests left in a shared store.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobNotFoundError, BlobTooLargeError, type BlobStore } from '../../stores/blobstore/blobStore';

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

export function blobStoreContract(name: string, open: () => Promise<BlobStore>, skipReason?: string): void {
  const suite = skipReason === undefined ? describe : describe.skip;
  suite(skipReason === undefined ? name : `${name} (skipped: ${skipReason})`, () => {
    let store: BlobStore;

    beforeEach(async () => {
      store = await open();
    });

    afterEach(async () => {
      await store.close();
    });

    it('stores a Buffer and reads it back', async () => {
      const content = randomBytes(1000);
      const info = await store.put(content);
      expect(info).toEqual({ sha256: sha256(content), size: 1000 });
      expect(await readAll(await store.open(info.sha256))).toEqual(content);
    });

    it('takes over a file written by the caller: stored, readable, and gone from where it was', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'blob-putfile-'));
      try {
        const content = randomBytes(5000);
        const file = join(dir, 'upload.part');
        await writeFile(file, content);
        const info = await store.putFile(file, { sha256: sha256(content), size: content.length });
        expect(info).toEqual({ sha256: sha256(content), size: 5000 });
        expect(await readAll(await store.open(info.sha256))).toEqual(content);
        expect(existsSync(file)).toBe(false);
        // Content already stored: the file still goes, the answer is the same.
        await writeFile(file, content);
        expect(await store.putFile(file, info)).toEqual(info);
        expect(existsSync(file)).toBe(false);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('stores a stream and an async iterable and reads them back', async () => {
      const parts = [randomBytes(300), randomBytes(5), randomBytes(70_000)];
      const whole = Buffer.concat(parts);
      const fromStream = await store.put(Readable.from(parts));
      expect(fromStream).toEqual({ sha256: sha256(whole), size: whole.length });
      expect(await readAll(await store.open(fromStream.sha256))).toEqual(whole);

      const other = parts.map((part) => new Uint8Array(Buffer.concat([part, Buffer.from('!')])));
      async function* generate(): AsyncIterable<Uint8Array> {
        yield* other;
      }
      const fromIterable = await store.put(generate());
      expect(await readAll(await store.open(fromIterable.sha256))).toEqual(Buffer.concat(other));
    });

    it('addresses content by the lowercase hex SHA-256 node:crypto gives', async () => {
      const content = Buffer.from(`hello ${randomBytes(8).toString('hex')}`);
      const info = await store.put(content);
      expect(info.sha256).toBe(createHash('sha256').update(content).digest('hex'));
      expect(info.sha256).toMatch(/^[0-9a-f]{64}$/);
    });

    it('answers the size of a stored blob from stat', async () => {
      const info = await store.put(randomBytes(4321));
      expect(await store.stat(info.sha256)).toEqual(info);
    });

    it('stores the same content once and answers the same info both times', async () => {
      const content = randomBytes(2048);
      const first = await store.put(content);
      const second = await store.put(Readable.from([content.subarray(0, 100), content.subarray(100)]));
      expect(second).toEqual(first);
      // One delete removes it: there was a single blob.
      expect(await store.delete(first.sha256)).toBe(true);
      expect(await store.stat(first.sha256)).toBeUndefined();
      expect(await store.delete(first.sha256)).toBe(false);
    });

    it('stores content put concurrently several times as one blob', async () => {
      const content = randomBytes(3000);
      const infos = await Promise.all([store.put(content), store.put(Readable.from([content])), store.put(content)]);
      expect(new Set(infos.map((info) => info.sha256)).size).toBe(1);
      expect(await readAll(await store.open(infos[0]!.sha256))).toEqual(content);
      expect(await store.delete(infos[0]!.sha256)).toBe(true);
      expect(await store.stat(infos[0]!.sha256)).toBeUndefined();
    });

    it('throws BlobNotFoundError when opening an unknown address', async () => {
      const unknown = sha256(randomBytes(16));
      await expect(store.open(unknown)).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(store.open('../../etc/passwd')).rejects.toBeInstanceOf(BlobNotFoundError);
      expect(await store.stat(unknown)).toBeUndefined();
    });

    it('refuses content past maxBytes with BlobTooLargeError and keeps nothing', async () => {
      const content = randomBytes(10_001);
      await expect(store.put(content, { maxBytes: 10_000 })).rejects.toBeInstanceOf(BlobTooLargeError);
      const streamed = [randomBytes(6000), randomBytes(6000)];
      await expect(store.put(Readable.from(streamed), { maxBytes: 10_000 })).rejects.toBeInstanceOf(BlobTooLargeError);
      expect(await store.stat(sha256(content))).toBeUndefined();
      expect(await store.stat(sha256(Buffer.concat(streamed)))).toBeUndefined();
    });

    it('accepts content of exactly maxBytes', async () => {
      const content = randomBytes(10_000);
      expect(await store.put(content, { maxBytes: 10_000 })).toEqual({ sha256: sha256(content), size: 10_000 });
    });

    it('rejects a put whose source fails and keeps nothing readable', async () => {
      const head = randomBytes(1000);
      async function* failing(): AsyncIterable<Uint8Array> {
        yield head;
        throw new Error('device disconnected');
      }
      await expect(store.put(failing())).rejects.toThrow('device disconnected');
      expect(await store.stat(sha256(head))).toBeUndefined();
    });

    it('deletes a blob, after which it cannot be opened', async () => {
      const info = await store.put(randomBytes(500));
      expect(await store.delete(info.sha256)).toBe(true);
      await expect(store.open(info.sha256)).rejects.toBeInstanceOf(BlobNotFoundError);
      expect(await store.delete(info.sha256)).toBe(false);
    });

    it('sets quarantined content aside: unreadable, then back whole on restore', async () => {
      const content = randomBytes(700);
      const info = await store.put(content);
      expect(await store.quarantine(info.sha256)).toBe(true);
      // Again: it is still set aside.
      expect(await store.quarantine(info.sha256)).toBe(true);
      expect(await store.stat(info.sha256)).toBeUndefined();
      await expect(store.open(info.sha256)).rejects.toBeInstanceOf(BlobNotFoundError);
      await store.restore(info.sha256);
      expect(await store.stat(info.sha256)).toEqual(info);
      expect(await readAll(await store.open(info.sha256))).toEqual(content);
      // Restored: nothing is left aside to purge.
      await store.purge(info.sha256);
      expect(await readAll(await store.open(info.sha256))).toEqual(content);
    });

    it('stores quarantined content afresh on a put, and a purge then leaves the fresh copy', async () => {
      const content = randomBytes(900);
      const info = await store.put(content);
      await store.quarantine(info.sha256);
      expect(await store.put(content)).toEqual(info);
      expect(await store.stat(info.sha256)).toEqual(info);
      await store.purge(info.sha256);
      expect(await readAll(await store.open(info.sha256))).toEqual(content);
      // A restore now has nothing to bring back, and keeps the live copy.
      await store.restore(info.sha256);
      expect(await readAll(await store.open(info.sha256))).toEqual(content);
    });

    it('removes quarantined content for good on purge', async () => {
      const info = await store.put(randomBytes(300));
      await store.quarantine(info.sha256);
      await store.purge(info.sha256);
      await store.restore(info.sha256);
      expect(await store.stat(info.sha256)).toBeUndefined();
      expect(await store.quarantine(info.sha256)).toBe(false);
      expect(await store.quarantine(sha256(randomBytes(10)))).toBe(false);
    });

    it('stores an empty blob', async () => {
      const info = await store.put(Buffer.alloc(0));
      expect(info).toEqual({ sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', size: 0 });
      expect(await store.stat(info.sha256)).toEqual(info);
      expect((await readAll(await store.open(info.sha256))).length).toBe(0);
    });

    it('round-trips a 20 MB blob streamed in chunks', async () => {
      const chunkSize = 64 * 1024;
      const chunks = (20 * 1024 * 1024) / chunkSize;
      const expected = createHash('sha256');
      async function* generate(): AsyncIterable<Uint8Array> {
        for (let i = 0; i < chunks; i++) {
          const chunk = randomBytes(chunkSize);
          expected.update(chunk);
          yield chunk;
        }
      }
      const info = await store.put(generate());
      expect(info).toEqual({ sha256: expected.digest('hex'), size: chunks * chunkSize });
      const readBack = createHash('sha256');
      let size = 0;
      for await (const chunk of await store.open(info.sha256)) {
        readBack.update(chunk as Uint8Array);
        size += (chunk as Uint8Array).byteLength;
      }
      expect({ sha256: readBack.digest('hex'), size }).toEqual(info);
      await store.delete(info.sha256);
    });
  });
}

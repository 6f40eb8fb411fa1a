// Files are parsed on the event loop, streamed through their source: a file on disk gets the answer
// its bytes get in memory, format errors stay format errors, the same file gets the same answer
// every time, and the loop keeps turning while a large file is read.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SampleFormatError } from '../../domain/sample/formats/sampleFormat';
import { receivedOnDisk, type ReceivedFile } from '../../ingestion/receiveFile';
import { SampleParser } from '../../ingestion/sampleParser';
import { signedSample } from '../support/signedSample';

const dir = mkdtempSync(join(tmpdir(), 'sample-parser-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HMAC = 'a'.repeat(32);
let n = 0;
function onDisk(text: string): ReceivedFile {
  const path = join(dir, `${n++}.part`);
  writeFileSync(path, text);
  return receivedOnDisk(path, Buffer.byteLength(text), '0'.repeat(64));
}
function inMemory(text: string): ReceivedFile {
  const bytes = Buffer.from(text);
  return { ...onDisk(text), path: undefined, source: () => ({ size: bytes.length, read: async (o, l) => bytes.subarray(o, o + l), readAll: async () => bytes, close: async () => {} }) };
}
const rows = (count: number) => Array.from({ length: count }, (_, i) => [i, -i / 2]);

describe('SampleParser', () => {
  const parsers: SampleParser[] = [];
  const parser = () => {
    const p = new SampleParser();
    parsers.push(p);
    return p;
  };
  afterEach(async () => {
    await Promise.all(parsers.splice(0).map((p) => p.close()));
  });

  it('answers for a file on disk what it answers for the same bytes in memory, signature check included', async () => {
    const text = signedSample(HMAC, rows(80_000));
    expect(text.length).toBeGreaterThan(1024 * 1024);
    const p = parser();
    const inWorker = await p.parse(onDisk(text), 'big.json', 'application/json', [HMAC]);
    const inPlace = await p.parse(inMemory(text), 'big.json', 'application/json', [HMAC]);
    expect(inWorker).toEqual(inPlace);
    expect(inWorker).toMatchObject({ valuesCount: 80_000, signature: { method: 'HS256', valid: true } });
  });

  it('refuses a malformed file with a SampleFormatError, and goes on', async () => {
    const p = parser();
    const bad = p.parse(onDisk('{"protected": '), 'bad.json', 'application/json', []);
    await expect(bad).rejects.toBeInstanceOf(SampleFormatError);
    await expect(bad).rejects.toThrow(/Malformed JSON/);
    await expect(p.parse(onDisk(signedSample(HMAC, rows(3))), 'ok.json', null, [HMAC])).resolves.toMatchObject({ valuesCount: 3 });
  });

  it('accepts the same large file the same way every time (it once failed a 96 MB worker heap)', async () => {
    const p = parser();
    const file = onDisk(signedSample(HMAC, rows(1_500_000)));
    const first = await p.parse(file, 'huge.json', 'application/json', [HMAC]);
    const second = await p.parse(file, 'huge.json', 'application/json', [HMAC]);
    expect(first).toMatchObject({ valuesCount: 1_500_000, signature: { method: 'HS256', valid: true, keyIndex: 0 } });
    expect(second).toEqual(first);
  });

  it('keeps the event loop free while a large file is parsed', async () => {
    const p = parser();
    const file = onDisk(signedSample(HMAC, rows(400_000)));
    // The longest the event loop went without a timer tick, against the whole parse: a parse on
    // this thread would make them about equal, whatever the machine's load.
    let last = performance.now();
    let longestGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 2);
    const started = performance.now();
    await p.parse(file, 'large.json', null, [HMAC]);
    const took = performance.now() - started;
    clearInterval(timer);
    expect(took).toBeGreaterThan(50);
    expect(longestGap).toBeLessThan(took / 2);
  });

  it('decodes the first values of a large stored file from its stream, reading no further than needed', async () => {
    const p = parser();
    const text = signedSample(HMAC, rows(80_000));
    let chunksRead = 0;
    async function* stream(bytes: Buffer) {
      for (let at = 0; at < bytes.length; at += 64 * 1024) {
        chunksRead++;
        yield bytes.subarray(at, at + 64 * 1024);
      }
    }
    const first = await p.values(stream(Buffer.from(text)), 'application/json', 5);
    // JSON has no -0: the row [0, -0] comes back as [0, 0].
    const asJson = (r: number[][]) => JSON.parse(JSON.stringify(r)) as number[][];
    expect(first).toEqual(asJson(rows(5)));
    expect(chunksRead).toBe(1);
    const small = await p.values(stream(Buffer.from(signedSample(HMAC, rows(10)))), 'application/json', 3);
    expect(small).toEqual(asJson(rows(3)));
    await expect(p.values(stream(Buffer.alloc(2 * 1024 * 1024, 32)), 'application/json', 5)).rejects.toBeInstanceOf(SampleFormatError);
  });
});

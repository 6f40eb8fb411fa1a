// Receiving a multipart body whose client went away: at any moment, even before the body reached
// the parser, the request fails as the client's fault and leaves no file behind.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../domain/shared/errors';
import { receiveMultipart } from '../../ingestion/receiveMultipart';

const BOUNDARY = 'b0undary';
const headers = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="data"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\n`;
const options = (dir: string) => ({ dir, maxFiles: 10, maxFileBytes: 1024 * 1024 });
const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms))]);

describe('receiveMultipart', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses a body whose client left before it was read, keeping no part of it', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'multipart-'));
    // As a request aborted while its API key was checked: destroyed, with bytes still buffered.
    const body = new Readable({ read() {} });
    body.push(Buffer.from(`${head}timestamp,x\n${'1,2\n'.repeat(10_000)}`));
    body.destroy();
    await expect(within(receiveMultipart(body, headers, options(dir)), 5000)).rejects.toBeInstanceOf(ValidationError);
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a body cut in the middle of a part, keeping no part of it', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'multipart-'));
    const body = new Readable({ read() {} });
    const received = receiveMultipart(body, headers, options(dir));
    body.push(Buffer.from(`${head}timestamp,x\n`));
    for (let i = 0; i < 50; i++) body.push(Buffer.from('1,2\n'.repeat(2000)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    body.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    await expect(within(received, 5000)).rejects.toBeInstanceOf(ValidationError);
    expect(await readdir(dir)).toEqual([]);
  });
});

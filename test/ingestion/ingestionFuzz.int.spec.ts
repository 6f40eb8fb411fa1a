import http from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService, registerUser } from '../support/testService';
import { signedSample } from '../support/signedSample';

/** Generated bodies through the HTTP endpoints: never a 500, never a crash, never a stored sample. */
describe('the ingestion API under generated input', () => {
  let service: TestService;
  let apiKey: string;
  let hmacKey: string;

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    const { token } = await registerUser(service);
    const project = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Fuzz' } });
    apiKey = String(project.body.apiKey);
    hmacKey = String((await call(service, 'GET', `/api/${String(project.body.id)}/devkeys`, { headers: { 'x-jwt-token': token } })).body.hmacKey);
  });
  afterAll(async () => {
    await service?.destroy();
  });

  const valid = () => Buffer.from(signedSample(hmacKey, [[1, 2], [3, 4], [5, 6]]));
  /** A valid file with bytes flipped, cut or inserted: most are refused, none may fail the server. */
  const mutated = fc
    .tuple(fc.integer({ min: 0, max: 2 }), fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 8 }))
    .map(([kind, at, bytes]) => {
      const base = valid();
      const i = at % base.length;
      if (kind === 0) return Buffer.concat([base.subarray(0, i), Buffer.from(bytes), base.subarray(i + bytes.length)]);
      if (kind === 1) return base.subarray(0, i);
      return Buffer.concat([base.subarray(0, i), Buffer.from(bytes), base.subarray(i)]);
    });
  const body = fc.oneof(fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)), fc.json().map((j) => Buffer.from(j)), mutated);
  const contentType = fc.constantFrom('application/json', 'application/cbor', 'text/csv', 'application/octet-stream', 'image/png');

  it('answers /data with a clear status and never a 500; whatever is refused stores nothing', async () => {
    await fc.assert(
      fc.asyncProperty(body, contentType, fc.string({ maxLength: 40 }), async (bytes, type, name) => {
        const before = await service.stores.events.headPosition();
        const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'content-type': type, 'x-file-name': encodeURIComponent(name || 'f') },
          body: bytes,
        });
        const text = await res.text();
        expect([200, 400, 413, 421], text).toContain(res.status);
        expect(text.length).toBeGreaterThan(0);
        if (res.status !== 200) expect(await service.stores.events.headPosition()).toBe(before);
      }),
      { numRuns: 300 },
    );
  });

  it('answers any method on any path with a 4xx, never a 500', async () => {
    const port = Number(new URL(service.ingestionUrl!).port);
    const statusOf = (method: string, path: string) =>
      new Promise<number>((resolve, reject) => {
        // node:http, not fetch: fetch refuses to send TRACE.
        const req = http.request({ host: '127.0.0.1', port, method, path, headers: { 'x-api-key': apiKey }, agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
    const answers: string[] = [];
    for (const path of ['/api/training/data', '/api/split/files', '/api/bogus/data', '/api/training', '/nope', '/%00', '/api/%E0%A4%A/data']) {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'HEAD', 'POST']) {
        const status = await statusOf(method, path);
        if (status < 200 || status >= 500) answers.push(`${method} ${path}: ${status}`);
      }
    }
    expect(answers).toEqual([]);
  });

  it('answers /files with a clear status and never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(body, contentType, fc.string({ minLength: 1, maxLength: 20 })), { minLength: 1, maxLength: 4 }), async (files) => {
        const form = new FormData();
        for (const [bytes, type, name] of files) form.append('data', new Blob([bytes], { type }), name);
        const res = await fetch(`${service.ingestionUrl}/api/testing/files`, { method: 'POST', headers: { 'x-api-key': apiKey }, body: form });
        const text = await res.text();
        expect([200, 400, 413, 421], text).toContain(res.status);
      }),
      { numRuns: 150 },
    );
  });
});

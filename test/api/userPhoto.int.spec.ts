import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Router from '@koa/router';
import { EdgeImpulseApi } from 'edge-impulse-api';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthDeps } from '../../api/auth/principal';
import { jsonEnvelope } from '../../api/http/envelope';
import { mountOperations, operation, requireFile } from '../../api/http/operation';
import { ValidationError } from '../../domain/shared/errors';
import { GIF, JPEG, png } from '../support/images';
import { adaAndBob, call, describeOn, setups, signup, startTestService, type TestService } from '../support/testService';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

interface Upload {
  bytes: Uint8Array;
  type?: string;
  name?: string;
  field?: string;
}

function form(...files: Upload[]): FormData {
  const body = new FormData();
  for (const f of files) body.append(f.field ?? 'photo', new Blob([f.bytes], { type: f.type ?? 'application/octet-stream' }), f.name ?? 'photo.bin');
  return body;
}

async function send(url: string, init: RequestInit & { duplex?: 'half' }): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, init);
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
  } catch {
    return { status: response.status, body: { unparsed: text } };
  }
}

/**
 * A multipart body sent chunked (no Content-Length), so a size limit can only be enforced while the
 * bytes arrive.
 */
function chunkedMultipart(field: string, bytes: Uint8Array): { body: ReadableStream<Uint8Array>; contentType: string } {
  const boundary = '----photo-test-boundary';
  const parts = [
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`),
    ...Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536)),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ];
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    body: new ReadableStream({
      pull(controller) {
        const next = parts.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    }),
  };
}

/** Bigger than 2 MB, starting like a PNG. */
const oversized = () => Buffer.concat([png([1, 2, 3, 255]), Buffer.alloc(2 * 1024 * 1024)]);

for (const setup of setups) {
  describeOn(setup, 'user photos over HTTP', () => {
    let service: TestService;
    let ada: string;
    let bob: string;
    let adaId: number;
    let bobId: number;
    let apiKey: string;

    const red = png([255, 0, 0, 255]);
    const green = png([0, 255, 0, 255]);
    const blue = png([0, 0, 255, 255]);

    const jwt = (token: string) => ({ 'x-jwt-token': token });
    const login = async (username: string) =>
      String((await call(service, 'POST', '/api-login', { body: { username, password: 'correct horse battery' } })).body.token);
    const upload = (pathname: string, token: string, body: FormData) => send(`${service.apiUrl}/v1${pathname}`, { method: 'POST', headers: jwt(token), body });
    const served = (url: string) => url.replace('http://studio.test', service.apiUrl);
    const photoOf = async (token: string) => (await call(service, 'GET', '/api/user', { headers: jwt(token) })).body.photo;
    const head = () => service.stores.events.headPosition();
    const hasBlob = async (bytes: Uint8Array) => (await service.stores.blobs.stat(sha256(bytes))) !== undefined;
    const urlOf = (bytes: Uint8Array) => `http://studio.test/v1/user-photos/${sha256(bytes)}`;

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      ({ adaId, bobId, ada, bob } = await adaAndBob(service));
      apiKey = String((await call(service, 'POST', '/api/projects/create', { headers: jwt(ada), body: { projectName: 'Keys' } })).body.apiKey);
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('uploads a PNG and answers the URL it is served at, which GET /api/user then shows', async () => {
      const res = await upload('/api/user/photo', ada, form({ bytes: red, type: 'image/png', name: 'me.png' }));
      expect(res).toEqual({ status: 200, body: { success: true, url: urlOf(red) } });
      expect(await photoOf(ada)).toBe(urlOf(red));
      expect(await hasBlob(red)).toBe(true);
    });

    it('serves the photo publicly with its bytes and content type, and answers 304 to a revalidation', async () => {
      const response = await fetch(served(urlOf(red)));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/png');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(Buffer.from(await response.arrayBuffer())).toEqual(red);
      // fetch marks a conditional request `no-cache` unless told otherwise, which would skip the check.
      const again = await fetch(served(urlOf(red)), { headers: { 'if-none-match': response.headers.get('etag')!, 'cache-control': 'max-age=0' } });
      expect(again.status).toBe(304);
    });

    it('keeps the photo address out of the log in clear', async () => {
      const inner = (service.stores.events as unknown as { inner: { readAll(): AsyncIterable<{ type: string; data: Record<string, unknown> }> } }).inner;
      const changes = [];
      for await (const e of inner.readAll()) if (e.type === 'UserPhotoChanged') changes.push(e);
      expect(changes).toHaveLength(1);
      const text = JSON.stringify(changes, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
      expect(text).toMatch(/sealed:v1:/);
      expect(text).not.toContain(sha256(red));
    });

    it('replaces the photo with a JPEG sent by the official SDK, deleting the old blob', async () => {
      const api = new EdgeImpulseApi({ endpoint: service.apiUrl });
      await api.authenticate({ method: 'jwtToken', jwtToken: ada });
      // Named and typed as something else: only the content counts.
      const res = await api.user.uploadPhotoCurrentUser({ photo: { value: JPEG, options: { filename: 'photo.gif', contentType: 'image/gif' } } });
      expect(res).toMatchObject({ success: true, url: urlOf(JPEG) });
      expect(await photoOf(ada)).toBe(urlOf(JPEG));
      const response = await fetch(served(urlOf(JPEG)));
      expect(response.headers.get('content-type')).toBe('image/jpeg');
      expect(Buffer.from(await response.arrayBuffer())).toEqual(JPEG);
      expect(await hasBlob(red)).toBe(false);
      const old = await call(service, 'GET', `/user-photos/${sha256(red)}`);
      expect(old).toMatchObject({ status: 404, body: { success: false, error: 'No such photo' } });
    });

    it('uploading the current photo again changes nothing', async () => {
      const before = await head();
      const res = await upload('/api/user/photo', ada, form({ bytes: JPEG, type: 'image/jpeg' }));
      expect(res).toEqual({ status: 200, body: { success: true, url: urlOf(JPEG) } });
      expect(await head()).toBe(before);
    });

    it('keeps a blob that another user still has as their photo', async () => {
      expect((await upload('/api/user/photo', bob, form({ bytes: green }))).status).toBe(200);
      expect((await upload('/api/user/photo', ada, form({ bytes: green }))).status).toBe(200);
      expect(await hasBlob(JPEG)).toBe(false);
      expect((await upload('/api/user/photo', ada, form({ bytes: blue }))).status).toBe(200);
      expect(await hasBlob(green)).toBe(true);
      expect((await fetch(served(urlOf(green)))).status).toBe(200);
    });

    it('deletes the photo: gone from the profile, the URL and the blob store; deleting again is a no-op', async () => {
      const res = await call(service, 'DELETE', '/api/user/photo', { headers: jwt(ada) });
      expect(res).toEqual({ status: 200, body: { success: true }, headers: expect.anything() });
      const user = await call(service, 'GET', '/api/user', { headers: jwt(ada) });
      expect(user.body).not.toHaveProperty('photo');
      expect(await hasBlob(blue)).toBe(false);
      expect((await call(service, 'GET', `/user-photos/${sha256(blue)}`)).status).toBe(404);
      const before = await head();
      expect((await call(service, 'DELETE', '/api/user/photo', { headers: jwt(ada) })).status).toBe(200);
      expect(await head()).toBe(before);
    });

    it('refuses what is not a PNG or JPEG with 400 naming the problem, storing and appending nothing', async () => {
      const before = await head();
      const gif = await upload('/api/user/photo', ada, form({ bytes: GIF, type: 'image/png', name: 'photo.png' }));
      expect(gif).toEqual({ status: 400, body: { success: false, error: 'The photo must be a PNG or JPEG image; this file is a GIF image' } });
      const text = Buffer.from('definitely not an image\n');
      const notImage = await upload('/api/user/photo', ada, form({ bytes: text, type: 'image/jpeg', name: 'photo.jpg' }));
      expect(notImage).toEqual({ status: 400, body: { success: false, error: 'The photo must be a PNG or JPEG image; this file is not an image' } });
      const truncatedPng = red.subarray(0, red.length - 20);
      const truncated = await upload('/api/user/photo', ada, form({ bytes: truncatedPng, type: 'image/png' }));
      expect(truncated).toEqual({ status: 400, body: { success: false, error: 'The photo is not a valid PNG: the file is truncated (it ends before the IEND chunk)' } });
      const headerOnly = await upload('/api/user/photo', ada, form({ bytes: red.subarray(0, 20), type: 'image/png' }));
      expect(headerOnly.status).toBe(400);
      expect(headerOnly.body.error).toMatch(/not a valid PNG/);
      const truncatedJpeg = await upload('/api/user/photo', ada, form({ bytes: JPEG.subarray(0, JPEG.length - 10), type: 'image/jpeg' }));
      expect(truncatedJpeg.status).toBe(400);
      expect(truncatedJpeg.body.error).toMatch(/not a valid JPEG: the file is truncated/);
      expect(await head()).toBe(before);
      for (const bytes of [GIF, text, truncatedPng]) expect(await hasBlob(bytes)).toBe(false);
      expect(await photoOf(ada)).toBeUndefined();
    });

    it('refuses a file over 2 MB with 413, whether or not the length is declared', async () => {
      const before = await head();
      const declared = await upload('/api/user/photo', ada, form({ bytes: oversized(), type: 'image/png' }));
      expect(declared).toEqual({ status: 413, body: { success: false, error: 'The file is too large: at most 2 MB' } });
      const { body, contentType } = chunkedMultipart('photo', oversized());
      const streamed = await send(`${service.apiUrl}/v1/api/user/photo`, { method: 'POST', headers: { ...jwt(ada), 'content-type': contentType }, body, duplex: 'half' });
      expect(streamed).toEqual({ status: 413, body: { success: false, error: 'The file is too large: at most 2 MB' } });
      expect(await head()).toBe(before);
      expect(await hasBlob(oversized())).toBe(false);
    });

    it('answers 400 when the photo field is missing, or the body is not multipart', async () => {
      const textOnly = new FormData();
      textOnly.append('photo', 'not a file');
      const noFile = await upload('/api/user/photo', ada, textOnly);
      expect(noFile).toEqual({ status: 400, body: { success: false, error: 'Invalid request body: "photo" is required, as a file field of a multipart/form-data body' } });
      const otherField = await upload('/api/user/photo', ada, form({ bytes: red, field: 'avatar' }));
      expect(otherField).toEqual({ status: 400, body: { success: false, error: 'Unexpected file field "avatar": this operation takes "photo"' } });
      const twoFiles = await upload('/api/user/photo', ada, form({ bytes: red }, { bytes: green }));
      expect(twoFiles.status).toBe(400);
      expect(twoFiles.body.error).toMatch(/Too many files/);
      const json = await call(service, 'POST', '/api/user/photo', { headers: jwt(ada), body: { photo: 'x' } });
      expect(json.status).toBe(400);
      expect(json.body.error).toMatch(/"photo" is required/);
      const empty = await call(service, 'POST', '/api/user/photo', { headers: jwt(ada) });
      expect(empty.status).toBe(400);
      const malformed = await send(`${service.apiUrl}/v1/api/user/photo`, {
        method: 'POST',
        headers: { ...jwt(ada), 'content-type': 'multipart/form-data; boundary=abc' },
        body: '--abc\r\nContent-Disposition: form-data; name="photo"; filename="a.png"\r\n\r\nunfinished',
      });
      expect(malformed).toEqual({ status: 400, body: { success: false, error: 'Malformed multipart/form-data body' } });
    });

    it('takes a JWT only: an API key or no credentials are refused with 401', async () => {
      const before = await head();
      const withKey = await send(`${service.apiUrl}/v1/api/user/photo`, { method: 'POST', headers: { 'x-api-key': apiKey }, body: form({ bytes: red }) });
      expect(withKey.status).toBe(401);
      expect(withKey.body.error).toMatch(/needs a JWT token/);
      const none = await send(`${service.apiUrl}/v1/api/user/photo`, { method: 'POST', body: form({ bytes: red }) });
      expect(none.status).toBe(401);
      expect((await call(service, 'DELETE', '/api/user/photo', { headers: { 'x-api-key': apiKey } })).status).toBe(401);
      const byId = await send(`${service.apiUrl}/v1/api/users/${adaId}/photo`, { method: 'POST', headers: { 'x-api-key': apiKey }, body: form({ bytes: red }) });
      expect(byId.status).toBe(401);
      expect(await head()).toBe(before);
      expect(await hasBlob(red)).toBe(false);
    });

    it("refuses to set another user's photo with 403", async () => {
      const before = await head();
      const res = await upload(`/api/users/${adaId}/photo`, bob, form({ bytes: red }));
      expect(res).toEqual({ status: 403, body: { success: false, error: 'You can only act on your own account' } });
      expect(await head()).toBe(before);
      expect(await hasBlob(red)).toBe(false);
    });

    it('lets a user set their own photo by id, and staff set anyone\'s', async () => {
      const own = await upload(`/api/users/${bobId}/photo`, bob, form({ bytes: blue }));
      expect(own).toEqual({ status: 200, body: { success: true, url: urlOf(blue) } });
      // Ada is the installation's first user: staff.
      const byStaff = await upload(`/api/users/${bobId}/photo`, ada, form({ bytes: JPEG }));
      expect(byStaff).toEqual({ status: 200, body: { success: true, url: urlOf(JPEG) } });
      expect(await photoOf(bob)).toBe(urlOf(JPEG));
      expect((await call(service, 'GET', `/api/users/${bobId}`, { headers: jwt(ada) })).body.photo).toBe(urlOf(JPEG));
      expect(await hasBlob(blue)).toBe(false);
      const unknown = await upload('/api/users/999999/photo', ada, form({ bytes: red }));
      expect(unknown.status).toBe(404);
      expect(await hasBlob(red)).toBe(false);
    });

    it('serves only current photos: other blobs and malformed addresses are a 404 JSON error', async () => {
      const other = await service.stores.blobs.put(Buffer.from('a sample file, not a photo'));
      for (const address of [other.sha256, '0'.repeat(64), 'not-a-sha', sha256(red).toUpperCase(), `${sha256(JPEG)}.jpg`]) {
        const res = await call(service, 'GET', `/user-photos/${address}`);
        expect(res).toMatchObject({ status: 404, body: { success: false, error: 'No such photo' } });
      }
      expect((await fetch(served(urlOf(JPEG)))).status).toBe(200);
    });

    it('describes the photo operations in the OpenAPI document', async () => {
      const res = await call(service, 'GET', '/openapi.json');
      expect(res.status).toBe(200);
      const paths = res.body.paths as Record<string, Record<string, { operationId: string }>>;
      expect(paths['/api/user/photo']?.post?.operationId).toBe('uploadPhotoCurrentUser');
      expect(paths['/api/user/photo']?.delete?.operationId).toBe('deletePhotoCurrentUser');
      expect(paths['/api/users/{userId}/photo']?.post?.operationId).toBe('uploadPhotoUser');
      expect(JSON.stringify(paths['/api/user/photo']?.post)).toContain('multipart/form-data');
    });

    it("deleting an account keeps a photo blob another user still has, and removes one nobody has", async () => {
      const shared = png([1, 2, 3, 255]);
      const own = png([4, 5, 6, 255]);
      const make = async (username: string) => {
        await call(service, 'POST', '/api-user-create', { body: signup({ username, email: `${username}@example.com` }) });
        return login(username);
      };
      const [first, second, third] = [await make('photo1'), await make('photo2'), await make('photo3')];
      expect((await upload('/api/user/photo', first, form({ bytes: shared }))).status).toBe(200);
      expect((await upload('/api/user/photo', second, form({ bytes: shared }))).status).toBe(200);
      expect((await upload('/api/user/photo', third, form({ bytes: own }))).status).toBe(200);
      expect((await call(service, 'DELETE', '/api/user', { headers: jwt(first), body: { password: 'correct horse battery' } })).status).toBe(200);
      expect(await hasBlob(shared)).toBe(true);
      expect((await fetch(served(urlOf(shared)))).status).toBe(200);
      expect((await call(service, 'DELETE', '/api/user', { headers: jwt(third), body: { password: 'correct horse battery' } })).status).toBe(200);
      expect(await hasBlob(own)).toBe(false);
    });
  });
}

describe('multipart operations', () => {
  let uploadDir: string;
  let server: http.Server;
  let base: string;
  const seen: { path: string; exists: boolean }[] = [];

  beforeAll(async () => {
    uploadDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-uploads-'));
    const { existsSync } = await import('node:fs');
    const router = new Router();
    mountOperations(
      router,
      [
        operation({
          operationId: 'takeFile',
          method: 'post',
          path: '/files',
          summary: 'test',
          auth: 'none',
          multipart: { files: ['file'], maxFileBytes: 1024, uploadDir },
          async handler(request) {
            const file = requireFile(request, 'file');
            seen.push({ path: file.path, exists: existsSync(file.path) });
            if (request.ctx.get('x-fail')) throw new ValidationError('the handler failed');
            return { size: file.size, sha256: file.sha256, clientFilename: file.clientFilename };
          },
        }),
      ],
      {
        auth: {} as AuthDeps,
        settle: async () => {},
        projectAccess: () => Promise.reject(new Error('no project route here')),
      },
    );
    const app = new Koa();
    app.use(jsonEnvelope());
    app.use(router.routes());
    server = http.createServer(app.callback()).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await rm(uploadDir, { recursive: true, force: true });
  });

  /** Formidable removes a partial file on a timer of its own: wait for the folder to empty. */
  const uploadDirEmpties = async () => {
    for (let i = 0; i < 50 && (await readdir(uploadDir)).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await readdir(uploadDir)).toEqual([]);
  };
  const body = (bytes: Uint8Array, field = 'file') => {
    const f = new FormData();
    f.append(field, new Blob([bytes]), 'name.bin');
    return f;
  };

  it('gives the handler the file with its size and SHA-256, then removes it', async () => {
    const bytes = Buffer.from('some bytes');
    const res = await send(`${base}/files`, { method: 'POST', body: body(bytes) });
    expect(res).toEqual({ status: 200, body: { success: true, size: bytes.length, sha256: sha256(bytes), clientFilename: 'name.bin' } });
    expect(seen.at(-1)).toMatchObject({ exists: true });
    // In a folder of the request's own under uploadDir, removed with it.
    expect(path.dirname(path.dirname(seen.at(-1)!.path))).toBe(uploadDir);
    await uploadDirEmpties();
  });

  it('removes the file when the handler fails', async () => {
    const res = await send(`${base}/files`, { method: 'POST', headers: { 'x-fail': '1' }, body: body(Buffer.from('x')) });
    expect(res).toEqual({ status: 400, body: { success: false, error: 'the handler failed' } });
    await uploadDirEmpties();
  });

  it('removes a partial file when the upload goes over the limit or is refused', async () => {
    const { body: stream, contentType } = chunkedMultipart('file', Buffer.alloc(200_000, 7));
    const tooLarge = await send(`${base}/files`, { method: 'POST', headers: { 'content-type': contentType }, body: stream, duplex: 'half' });
    expect(tooLarge).toEqual({ status: 413, body: { success: false, error: 'The file is too large: at most 1 KB' } });
    const wrongField = await send(`${base}/files`, { method: 'POST', body: body(Buffer.from('x'), 'other') });
    expect(wrongField.status).toBe(400);
    const emptyFile = await send(`${base}/files`, { method: 'POST', body: body(Buffer.alloc(0)) });
    expect(emptyFile).toEqual({ status: 400, body: { success: false, error: 'The file is empty' } });
    await uploadDirEmpties();
  });
});

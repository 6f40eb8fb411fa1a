import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import tls from 'node:tls';
import { deflateSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { PNG_SIGNATURE, pngChunk, pngHeader } from '../support/images';
import { signedSample } from '../support/signedSample';
import { signup } from '../support/testService';

// Clients that go away mid-request, on both APIs: uploads cut at many byte offsets (in the headers,
// at part boundaries, inside each part, in the last bytes), by a half-close (socket.end()), a close
// and a reset (RST), over HTTP and over TLS, and TLS handshakes cut short. The service runs as a
// process of its own, so an unhandled stream or socket error kills it and fails this test. After
// the cuts it must still answer, and nothing of a cut request may be stored: no sample, no event,
// no blob, no file left in the data folder's incoming/ or in the temporary folder.

type Mode = 'end' | 'destroy' | 'reset';

interface Running {
  child: ChildProcess;
  apiUrl: string;
  ingestionUrl: string;
  ingestionTlsUrl: string;
  exited: Promise<void>;
  stderr(): string;
}

const exitOf = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

function startProcess(dataDir: string, tmpDir: string, children: ChildProcess[]): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: path.resolve(__dirname, '../..'),
    // TMPDIR: the management API's multipart uploads are received in the system's temporary folder.
    env: { ...process.env, API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, TMPDIR: tmpDir, LOG_LEVEL: 'info', MONGO_URL: '', EVENTSTORE_URL: '', ROLES: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
  const exited = exitOf(child);
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; apiUrl?: string; ingestionUrl?: string; ingestionTlsUrl?: string };
        if (entry.msg === 'service started') {
          resolve({ child, apiUrl: entry.apiUrl!, ingestionUrl: entry.ingestionUrl!, ingestionTlsUrl: entry.ingestionTlsUrl!, exited, stderr: () => stderr });
        }
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`service exited with ${code ?? signal} before it started: ${stderr}`)));
  });
}

/** A request as bytes, with the offsets worth cutting at: around each boundary, in each part, the last bytes. */
interface RawRequest {
  name: string;
  bytes: Buffer;
  offsets: number[];
}

function rawRequest(name: string, method: string, pathname: string, headers: Record<string, string>, body: Buffer, bodyMarks: number[]): RawRequest {
  const head = Buffer.from(
    `${method} ${pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries({ ...headers, 'content-length': String(body.length) })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`,
  );
  const bytes = Buffer.concat([head, body]);
  // The request line, the middle of the headers, the headers' end, then the body's marks.
  const marks = [1, 10, Math.floor(head.length / 2), head.length - 1, head.length, ...bodyMarks.map((m) => head.length + m), bytes.length - 1];
  const offsets = new Set<number>();
  for (const m of marks) for (const o of [m - 1, m, m + 1]) if (o >= 1 && o < bytes.length) offsets.add(o);
  return { name, bytes, offsets: [...offsets].sort((a, b) => a - b) };
}

const BOUNDARY = '----cut-test-boundary-7d93';

/** A multipart body; marks at each part's start, its content's start, middle and end, and the closing boundary. */
function multipart(parts: { field: string; fileName: string; type: string; content: Buffer }[]): { body: Buffer; marks: number[] } {
  const chunks: Buffer[] = [];
  const marks: number[] = [];
  let at = 0;
  const push = (b: Buffer) => {
    chunks.push(b);
    at += b.length;
  };
  for (const part of parts) {
    marks.push(at);
    push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.field}"; filename="${part.fileName}"\r\nContent-Type: ${part.type}\r\n\r\n`));
    marks.push(at, at + Math.floor(part.content.length / 2), at + Math.floor(part.content.length * 0.9), at + part.content.length);
    push(part.content);
    push(Buffer.from('\r\n'));
  }
  marks.push(at);
  push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return { body: Buffer.concat(chunks), marks };
}

const csv = (rows: number) => Buffer.from(`timestamp,accX,accY\n${Array.from({ length: rows }, (_, i) => `${i * 10},${i % 97},${(i * 7) % 13}`).join('\n')}\n`);

/** A PNG of random pixels: it does not compress, so the upload spans many chunks. */
function noisePng(width: number, height: number): Buffer {
  const rows = Array.from({ length: height }, () => Buffer.concat([Buffer.from([0]), randomBytes(width * 4)]));
  return Buffer.concat([PNG_SIGNATURE, pngHeader(width, height), pngChunk('IDAT', deflateSync(Buffer.concat(rows))), pngChunk('IEND', Buffer.alloc(0))]);
}

interface Target {
  port: number;
  tls: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Connects (and, over TLS, completes the handshake); the raw TCP socket is returned for resets. */
function connect(target: Target): Promise<{ socket: net.Socket; raw: net.Socket }> {
  return new Promise((resolve, reject) => {
    const raw = net.connect(target.port, '127.0.0.1');
    raw.on('error', () => {});
    if (!target.tls) {
      raw.once('connect', () => resolve({ socket: raw, raw }));
      raw.once('error', reject);
      return;
    }
    const socket = tls.connect({ socket: raw, rejectUnauthorized: false, servername: 'localhost' });
    socket.on('error', () => {});
    socket.once('secureConnect', () => resolve({ socket, raw }));
    socket.once('error', reject);
  });
}

/** Sends the first `offset` bytes, lets the service start on them, then goes away as `mode` says. */
async function cutAt(target: Target, bytes: Buffer, offset: number, mode: Mode, delayMs: number): Promise<void> {
  const { socket, raw } = await connect(target);
  const closed = new Promise<void>((resolve) => {
    if (raw.destroyed) resolve();
    raw.once('close', () => resolve());
  });
  // Read whatever the service answers, so a half-closed socket can finish.
  socket.resume();
  await new Promise<void>((resolve) => socket.write(bytes.subarray(0, offset), () => resolve()));
  if (delayMs > 0) await sleep(delayMs);
  if (mode === 'end') socket.end();
  else if (mode === 'destroy') socket.destroy();
  else raw.resetAndDestroy();
  // A half-closed connection is closed by the service once it has answered; bounded, in case it waits.
  await Promise.race([closed, sleep(3000)]);
  if (!raw.destroyed) raw.destroy();
}

/** Every request is cut at each of its offsets, in each mode, half of them after a pause. */
async function cutEverywhere(target: Target, request: RawRequest): Promise<number> {
  let n = 0;
  for (const [i, offset] of request.offsets.entries()) {
    for (const mode of ['end', 'destroy', 'reset'] as const) {
      await cutAt(target, request.bytes, offset, mode, i % 2 === 0 ? 0 : 15);
      n++;
    }
  }
  return n;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('a service process whose clients cut their connections mid-request', () => {
  let root: string | undefined;
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await Promise.all(children.map(exitOf));
    if (root) await rm(root, { recursive: true, force: true, maxRetries: 5 });
  });

  it('keeps running on both APIs and stores nothing of a cut upload, over HTTP and TLS', async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-cuts-'));
    const dataDir = path.join(root, 'data');
    const tmpDir = path.join(root, 'tmp');
    await mkdir(tmpDir, { recursive: true });
    const service = await startProcess(dataDir, tmpDir, children);
    const alive = () => service.child.exitCode === null && service.child.signalCode === null;

    const json = async (res: Response) => {
      const text = await res.text();
      expect(res.status, text).toBe(200);
      return JSON.parse(text) as Record<string, unknown>;
    };
    await json(await fetch(`${service.apiUrl}/v1/api-user-create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signup()) }));
    const token = String(
      (
        await json(
          await fetch(`${service.apiUrl}/v1/api-login`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ username: 'ada', password: 'correct horse battery' }),
          }),
        )
      ).token,
    );
    const api = (pathname: string, init: RequestInit = {}) => fetch(`${service.apiUrl}/v1${pathname}`, { ...init, headers: { 'x-jwt-token': token, ...init.headers } });
    const project = await json(await api('/api/projects/create', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ projectName: 'Cuts' }) }));
    const projectId = Number(project.id);
    const apiKey = String(project.apiKey);
    const hmacKey = String((await json(await api(`/api/${projectId}/devkeys`))).hmacKey);

    // What is stored, as the API lists it and as the data folder holds it.
    // The log's file, which keeps the small sample files too.
    const events = new Database(path.join(dataDir, 'events.sqlite'), { readonly: true, fileMustExist: true });
    const stored = async () => ({
      samples: Number((await json(await api(`/api/${projectId}/raw-data/count?category=training`))).count),
      projects: ((await json(await api('/api/projects'))).projects as unknown[]).length,
      photo: (await json(await api('/api/user'))).photo ?? null,
      events: (events.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n,
      smallBlobs: (events.prepare('SELECT (SELECT count(*) FROM blobs) + (SELECT count(*) FROM quarantine) AS n').get() as { n: number }).n,
      largeBlobs: (await filesUnder(path.join(dataDir, 'blobs'))).length,
    });
    // tsx keeps its compile cache in the temporary folder too.
    const leftovers = async () => [...(await filesUnder(path.join(dataDir, 'incoming'))), ...(await filesUnder(tmpDir)).filter((f) => !path.relative(tmpDir, f).startsWith('tsx-'))];
    const before = await stored();
    // The folders looked into are those the service uses (else the checks below could not fail).
    expect(await readdir(path.join(dataDir, 'incoming'))).toHaveLength(1);
    expect(await readdir(path.join(dataDir, 'blobs'))).toContain('tmp');

    const ingestionHeaders = { 'x-api-key': apiKey };
    const multipartRequest = (name: string, parts: Parameters<typeof multipart>[0]) => {
      const { body, marks } = multipart(parts);
      return rawRequest(name, 'POST', '/api/training/files', { ...ingestionHeaders, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body, marks);
    };
    const onePart = multipartRequest('/files, one part', [{ field: 'data', fileName: 'one.csv', type: 'text/csv', content: csv(60_000) }]);
    const severalParts = multipartRequest('/files, three parts', [
      { field: 'data', fileName: 'a.csv', type: 'text/csv', content: csv(50) },
      { field: 'data', fileName: 'b.csv', type: 'text/csv', content: csv(60_000) },
      { field: 'data', fileName: 'c.csv', type: 'text/csv', content: csv(80) },
    ]);
    const dataBody = (name: string, rows: number) => {
      const body = Buffer.from(signedSample(hmacKey, Array.from({ length: rows }, (_, i) => [i, i % 7])));
      return rawRequest(name, 'POST', '/api/training/data', { ...ingestionHeaders, 'content-type': 'application/json', 'x-file-name': `${name.replace(/\W+/g, '-')}.json` }, body, [
        0,
        Math.floor(body.length / 2),
        Math.floor(body.length * 0.9),
      ]);
    };
    // Up to 1 MB a /data body is received in memory, above it streamed to a file.
    const smallData = dataBody('/data, in memory', 200);
    const largeData = dataBody('/data, to a file', 120_000);
    expect(largeData.bytes.length).toBeGreaterThan(1024 * 1024);

    const photo = noisePng(300, 300);
    const photoBody = multipart([{ field: 'photo', fileName: 'me.png', type: 'image/png', content: photo }]);
    const photoUpload = rawRequest('user photo', 'POST', '/v1/api/user/photo', { 'x-jwt-token': token, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, photoBody.body, photoBody.marks);
    const createBody = Buffer.from(JSON.stringify({ projectName: 'Never created' }));
    const createProject = rawRequest('JSON body', 'POST', '/v1/api/projects/create', { 'x-jwt-token': token, 'content-type': 'application/json' }, createBody, [Math.floor(createBody.length / 2)]);

    const plain: Target = { port: Number(new URL(service.ingestionUrl).port), tls: false };
    const secure: Target = { port: Number(new URL(service.ingestionTlsUrl).port), tls: true };
    const management: Target = { port: Number(new URL(service.apiUrl).port), tls: false };
    const plans: [Target, RawRequest][] = [
      [plain, onePart],
      [plain, severalParts],
      [plain, smallData],
      [plain, largeData],
      [secure, onePart],
      [secure, severalParts],
      [secure, largeData],
      [management, photoUpload],
      [management, createProject],
    ];
    const started = Date.now();
    let connections = 0;
    for (const [target, request] of plans) {
      const during = `during "${request.name}" cuts${target.tls ? ' over TLS' : ''}`;
      connections += await cutEverywhere(target, request).catch(async (error: unknown) => {
        await Promise.race([service.exited, sleep(1000)]);
        throw new Error(alive() ? `${String(error)} ${during}` : `the service died ${during}: ${service.stderr()}`);
      });
      expect(alive(), `the service died ${during}: ${service.stderr()}`).toBe(true);
    }

    // TLS handshakes cut short: the client's first flight is cut at every few bytes, and garbage is sent.
    const hello = await clientHello();
    for (const offset of [1, 5, 6, 10, Math.floor(hello.length / 2), hello.length - 1, hello.length]) {
      for (const mode of ['end', 'reset'] as const) {
        await rawCut(secure.port, hello.subarray(0, offset), mode);
        connections++;
      }
    }
    await rawCut(secure.port, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), 'end');
    await rawCut(secure.port, randomBytes(2000), 'reset');
    connections += 2;
    const seconds = (Date.now() - started) / 1000;

    // In-flight requests may finish their clean-up just after their connection closed.
    const deadline = Date.now() + 10_000;
    while ((await leftovers()).length > 0 && Date.now() < deadline) await sleep(100);
    expect(alive(), `the service died: ${service.stderr()}`).toBe(true);
    expect(await leftovers(), 'files left by cut uploads').toEqual([]);
    expect(await stored(), 'what is stored after the cuts').toEqual(before);

    // Still answering on every port, and the checks above do see a stored upload.
    expect((await fetch(`${service.apiUrl}/v1/openapi.json`)).status).toBe(200);
    const whole = multipart([{ field: 'data', fileName: 'whole.csv', type: 'text/csv', content: csv(100) }]);
    const accepted = await tlsRequest(secure.port, rawRequest('whole', 'POST', '/api/training/files', { ...ingestionHeaders, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, connection: 'close' }, whole.body, []).bytes);
    expect(accepted, 'a whole upload over TLS').toMatch(/^HTTP\/1\.1 200/);
    const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
      method: 'POST',
      headers: { ...ingestionHeaders, 'content-type': 'application/json', 'x-file-name': 'whole.json' },
      body: signedSample(hmacKey, [[1, 2], [3, 4]]),
    });
    expect(res.status, await res.text()).toBe(200);
    // Ingestion answers on durability: the sample count (a read model) follows a moment later.
    await expect.poll(async () => (await stored()).samples, { timeout: 10_000 }).toBe(before.samples + 2);
    const after = await stored();
    expect(after.samples).toBe(before.samples + 2);
    expect(after.events).toBeGreaterThan(before.events);
    expect(after.smallBlobs).toBe(before.smallBlobs + 2);
    expect(await leftovers()).toEqual([]);
    console.log(`cut-connection test: ${connections} connections cut in ${seconds.toFixed(1)} s; the service kept running and stored nothing of them`);
    events.close();

    service.child.kill('SIGTERM');
    await service.exited;
  }, 120_000);
});

/** The bytes a TLS client sends first (its ClientHello), caught by a plain TCP listener. */
async function clientHello(): Promise<Buffer> {
  const server = net.createServer();
  const caught = new Promise<Buffer>((resolve) =>
    server.once('connection', (socket) => {
      socket.once('data', (data: Buffer) => {
        resolve(data);
        socket.destroy();
      });
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const client = tls.connect({ port: (server.address() as net.AddressInfo).port, host: '127.0.0.1', rejectUnauthorized: false, servername: 'localhost' });
  client.on('error', () => {});
  const hello = await caught;
  client.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return hello;
}

/** Raw bytes to a port, then a half-close or a reset. */
async function rawCut(port: number, bytes: Buffer, mode: 'end' | 'reset'): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.resume();
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.write(bytes, () => resolve()));
  await sleep(5);
  if (mode === 'end') socket.end();
  else socket.resetAndDestroy();
  await Promise.race([closed, sleep(3000)]);
  socket.destroy();
}

/** A whole request over TLS; the answer as text. */
async function tlsRequest(port: number, bytes: Buffer): Promise<string> {
  const socket = tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false, servername: 'localhost' });
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('error', reject);
    socket.once('end', () => resolve(Buffer.concat(chunks).toString()));
    socket.once('secureConnect', () => socket.write(bytes));
  });
}

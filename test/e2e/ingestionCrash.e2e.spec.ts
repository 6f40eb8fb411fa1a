import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { signup } from '../support/testService';

// A kill test of the ingestion API: another process uploads signed samples without pause, the
// service is killed with SIGKILL in the middle, and after a restart every upload it acknowledged
// must be listed exactly once with the bytes that were sent; nothing that was not sent may appear.

interface Running {
  child: ChildProcess;
  apiUrl: string;
  ingestionUrl: string;
  exited: Promise<void>;
}

const exitOf = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

/** Starts `main.ts` in a process of its own and resolves with its addresses once it serves. */
function startProcess(dataDir: string, children: ChildProcess[]): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: path.resolve(__dirname, '../..'),
    env: { ...process.env, API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', MONGO_URL: '', EVENTSTORE_URL: '', ROLES: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const exited = exitOf(child);
  return new Promise((resolve, reject) => {
    // The log is read to its end: a full pipe would block the service.
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; apiUrl?: string; ingestionUrl?: string };
        if (entry.msg === 'service started') resolve({ child, apiUrl: entry.apiUrl!, ingestionUrl: entry.ingestionUrl!, exited });
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`service exited with ${code ?? signal} before it started`)));
  });
}

/**
 * The uploader, run by plain Node in a process of its own: CONCURRENCY loops over keep-alive
 * connections, each POSTing a signed JSON sample with its own name and values to /api/training/data.
 * Before each request it prints `SEND <name> <sha256>`; after it, `ACK <name> <sha256> <answer>` for a
 * 200, `NACK <name> <status> <answer>` for any other status and `FAIL <name> <code>` when the
 * connection fails. Lines go to a pipe, which Node writes synchronously: a printed ACK is never lost.
 * Sample i has rows [i, r] for r < 10 + i % 40, so its values can be told from its name.
 */
const UPLOADER = String.raw`
import http from 'node:http';
import { createHash, createHmac } from 'node:crypto';

const { INGESTION_URL, API_KEY, HMAC_KEY, CONCURRENCY, PREFIX } = process.env;
const target = new URL('/api/training/data', INGESTION_URL);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(CONCURRENCY) });
let next = 0;

function signed(i) {
  const body = {
    protected: { ver: 'v1', alg: 'HS256', iat: Math.floor(Date.now() / 1000) },
    signature: '0'.repeat(64),
    payload: {
      device_name: 'crash-uploader',
      device_type: 'LINUX_TEST',
      interval_ms: 10,
      sensors: [{ name: 'accX', units: 'm/s2' }, { name: 'accY', units: 'm/s2' }],
      values: Array.from({ length: 10 + (i % 40) }, (_, r) => [i, r]),
    },
  };
  const json = JSON.stringify(body);
  return json.replace('0'.repeat(64), createHmac('sha256', HMAC_KEY).update(json).digest('hex'));
}

function post(name, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(target, {
      method: 'POST',
      agent,
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json', 'x-file-name': encodeURIComponent(name), 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function loop() {
  for (;;) {
    const i = next++;
    const name = PREFIX + '.' + i + '.json';
    const body = signed(i);
    const sha = createHash('sha256').update(body).digest('hex');
    console.log('SEND ' + name + ' ' + sha);
    try {
      const { status, text } = await post(name, body);
      if (status === 200) console.log('ACK ' + name + ' ' + sha + ' ' + JSON.stringify(text));
      else console.log('NACK ' + name + ' ' + status + ' ' + JSON.stringify(text));
    } catch (error) {
      console.log('FAIL ' + name + ' ' + (error.code ?? error.message));
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

for (let n = 0; n < Number(CONCURRENCY); n++) loop();
`;

const PREFIX = 'kill';
const CONCURRENCY = 8;
const valuesOf = (i: number) => Array.from({ length: 10 + (i % 40) }, (_, r) => [i, r]);

interface UploaderLog {
  sent: Map<string, string>;
  acked: Map<string, string>;
  answers: Map<string, string>;
  nacks: string[];
  fails: number;
}

describe('a service process killed while a device uploads', () => {
  let dataDir: string | undefined;
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await Promise.all(children.map(exitOf));
    if (dataDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 5 });
  });

  it('lists every acknowledged file once, with its content, after a restart', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-ingestion-crash-'));
    const serviceDir = path.join(dataDir, 'data');
    const first = await startProcess(serviceDir, children);

    const json = async (res: Response) => {
      const text = await res.text();
      expect(res.status, text).toBe(200);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const login = async (apiUrl: string) =>
      String(
        (
          await json(
            await fetch(`${apiUrl}/v1/api-login`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ username: 'ada', password: 'correct horse battery' }),
            }),
          )
        ).token,
      );
    const get = async (apiUrl: string, token: string, pathname: string) => json(await fetch(`${apiUrl}/v1${pathname}`, { headers: { 'x-jwt-token': token } }));

    await json(await fetch(`${first.apiUrl}/v1/api-user-create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signup()) }));
    let token = await login(first.apiUrl);
    const project = await json(
      await fetch(`${first.apiUrl}/v1/api/projects/create`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-jwt-token': token }, body: JSON.stringify({ projectName: 'Crash' }) }),
    );
    const projectId = Number(project.id);
    const apiKey = String(project.apiKey);
    const hmacKey = String((await get(first.apiUrl, token, `/api/${projectId}/devkeys`)).hmacKey);
    expect(apiKey).toMatch(/^ei_/);

    // Upload from another process, and kill the service once enough uploads were acknowledged.
    const script = path.join(dataDir, 'uploader.mjs');
    await writeFile(script, UPLOADER);
    const uploader = spawn(process.execPath, [script], {
      env: { ...process.env, INGESTION_URL: first.ingestionUrl, API_KEY: apiKey, HMAC_KEY: hmacKey, CONCURRENCY: String(CONCURRENCY), PREFIX },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(uploader);
    const log: UploaderLog = { sent: new Map(), acked: new Map(), answers: new Map(), nacks: [], fails: 0 };
    const killAt = 30 + Math.floor(Math.random() * 30);
    let inFlightAtKill = -1;
    let ackedAtKill = -1;
    let killed = false;
    const reachedKill = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${log.acked.size} uploads acknowledged in 20 s (${log.nacks.length} refused, ${log.fails} failed)`)), 20_000);
      uploader.once('exit', (code, signal) => {
        if (!killed) reject(new Error(`uploader exited with ${code ?? signal}`));
      });
      const lines = createInterface({ input: uploader.stdout! });
      lines.on('line', (line) => {
        const [kind, name = '', a = '', ...rest] = line.split(' ');
        if (kind === 'SEND') log.sent.set(name, a);
        else if (kind === 'ACK') {
          log.acked.set(name, a);
          log.answers.set(name, JSON.parse(rest.join(' ')) as string);
        } else if (kind === 'NACK') log.nacks.push(line);
        else if (kind === 'FAIL') log.fails++;
        if (!killed && log.acked.size >= killAt) {
          killed = true;
          first.child.kill('SIGKILL');
          ackedAtKill = log.acked.size;
          inFlightAtKill = log.sent.size - log.acked.size - log.nacks.length - log.fails;
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const uploaderDone = new Promise<void>((resolve) => uploader.stdout!.once('close', () => resolve()));
    await reachedKill;
    await first.exited;
    expect(first.child.signalCode).toBe('SIGKILL');
    // Let the uploader see its connections fail, then stop it and read what it printed to the end.
    await new Promise((resolve) => setTimeout(resolve, 300));
    uploader.kill('SIGKILL');
    await uploaderDone;
    await exitOf(uploader);

    expect(log.nacks, 'the live service refused uploads').toEqual([]);
    for (const [name, answer] of log.answers) expect(answer, `answer to ${name}`).toBe(name);
    for (const [name, sha] of log.acked) expect(log.sent.get(name), name).toBe(sha);
    const acked = log.acked.size;
    const unacknowledged = [...log.sent.keys()].filter((name) => !log.acked.has(name));

    // Restart on the same data and read everything back through the management API.
    const second = await startProcess(serviceDir, children);
    token = await login(second.apiUrl);
    const listed: Record<string, unknown>[] = [];
    let totalCount = 0;
    for (let offset = 0; ; offset += 1000) {
      const page = await get(second.apiUrl, token, `/api/${projectId}/raw-data?category=training&limit=1000&offset=${offset}`);
      const samples = page.samples as Record<string, unknown>[];
      totalCount = Number(page.totalCount);
      listed.push(...samples);
      if (samples.length < 1000) break;
    }
    expect(listed.length).toBe(totalCount);

    const byName = new Map<string, Record<string, unknown>[]>();
    for (const s of listed) byName.set(String(s.filename), [...(byName.get(String(s.filename)) ?? []), s]);
    const duplicates = [...byName].filter(([, list]) => list.length > 1).map(([name, list]) => `${name} ×${list.length} (ids ${list.map((s) => String(s.id)).join(', ')})`);
    expect(duplicates, 'files listed more than once').toEqual([]);
    expect(new Set(listed.map((s) => s.id)).size, 'sample ids').toBe(listed.length);
    const lost = [...log.acked.keys()].filter((name) => !byName.has(name));
    expect(lost, 'acknowledged files not listed').toEqual([]);
    const strangers = [...byName.keys()].filter((name) => !log.sent.has(name));
    expect(strangers, 'files the uploader never sent').toEqual([]);

    // Intact content: the stored hash is that of the bytes sent, and the values read back are those sent.
    const contentErrors: string[] = [];
    const check = async (s: Record<string, unknown>) => {
      const name = String(s.filename);
      if (s.sha256Hash !== log.sent.get(name)) contentErrors.push(`${name}: sha256Hash ${String(s.sha256Hash)}, sent ${log.sent.get(name)}`);
      if (s.signatureValidate !== true) contentErrors.push(`${name}: signature not valid`);
      const detail = await get(second.apiUrl, token, `/api/${projectId}/raw-data/${String(s.id)}`);
      const sample = detail.sample as Record<string, unknown>;
      if (sample.sha256Hash !== log.sent.get(name)) contentErrors.push(`${name}: detail sha256Hash ${String(sample.sha256Hash)}`);
      const i = Number(/^kill\.(\d+)\.json$/.exec(name)?.[1]);
      const values = (detail.payload as { values: unknown }).values;
      if (JSON.stringify(values) !== JSON.stringify(valuesOf(i))) contentErrors.push(`${name}: values read back differ from those sent`);
    };
    const queue = [...listed];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let s = queue.shift(); s; s = queue.shift()) await check(s);
      }),
    );
    expect(contentErrors).toEqual([]);

    const info = await get(second.apiUrl, token, `/api/${projectId}`);
    expect((info.dataSummaryPerCategory as { training: { dataCount: number } }).training.dataCount).toBe(listed.length);

    const storedUnacknowledged = unacknowledged.filter((name) => byName.has(name)).length;
    console.log(
      `ingestion kill test: killed after ${ackedAtKill} acks with ${inFlightAtKill} uploads in flight; ${acked} acknowledged in all, ` +
        `${log.sent.size} sent, ${log.fails} failed; ${listed.length} listed after restart (${storedUnacknowledged} of ${unacknowledged.length} unacknowledged stored)`,
    );

    second.child.kill('SIGTERM');
    await second.exited;
  }, 60_000);
});

// A full disk under the running service, on a real one: a small tmpfs holds the
// data folder and a filler file takes its last bytes. Writes must answer 507 (or 503) with
// Retry-After, never 500; /health on both ports must say why; reads go on; the process must not
// exit (a read-model group commit failing from its timer used to end it); once the filler is gone,
// uploads succeed again without a restart, and nothing acknowledged is lost.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitOf, killAll, startServiceProcess, type ServiceProcess } from '../support/serviceProcess';
import { signedSample } from '../support/signedSample';
import { fill, smallDisk, unmount } from '../support/smallDisk';
import { call, registerUser, signup } from '../support/testService';

/** Mounts a tmpfs of `size` on a new folder; undefined (with the reason) where mounting is not permitted. */


const mounted = await smallDisk('24m');
const skipReason = 'skip' in mounted ? mounted.skip : undefined;

describe.skipIf(skipReason !== undefined)(`a full disk under the running service${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  const children: ChildProcess[] = [];
  const dir = 'dir' in mounted ? mounted.dir : '';
  const filler = path.join(dir, 'filler');
  let service: ServiceProcess;
  let token: string;
  let projectId: number;
  let apiKey: string;
  let acknowledgedSoFar: string[] = [];

  beforeAll(async () => {
    const dataDir = path.join(dir, 'data');
    mkdirSync(dataDir);
    service = await startServiceProcess(dataDir, children, { LOG_LEVEL: 'info' });
    token = (await registerUser(service)).token;
    const project = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Full' } });
    projectId = Number(project.body.id);
    apiKey = String(project.body.apiKey);
  }, 60_000);
  afterAll(async () => {
    await killAll(children);
    if (dir) {
      rmSync(filler, { force: true });
      await unmount(dir);
    }
  });

  /**
   * A sample of `rows` rows (600: about 20 KB, held in memory; 40,000: about 1.3 MB, streamed to a
   * file), on a connection of its own: one refused before its body was read is closed.
   */
  const upload = (name: string, rows: number) => {
    const body = signedSample('none', Array.from({ length: rows }, (_, i) => [i, Math.sin(i) * 1000]), { alg: 'none' });
    return new Promise<{ status: number; headers: Headers; text: string }>((resolve, reject) => {
      const request = http.request(`${service.ingestionUrl}/api/training/data`, {
        method: 'POST',
        agent: false,
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': name, 'content-length': Buffer.byteLength(body) },
      });
      let answered = false;
      request.on('response', (response) => {
        answered = true;
        let text = '';
        response.on('data', (chunk) => (text += String(chunk)));
        response.on('end', () => resolve({ status: response.statusCode!, headers: new Headers(response.headers as Record<string, string>), text }));
      });
      // The answer may come before the whole body was sent; the rest then goes nowhere.
      request.on('error', (error) => (answered ? undefined : reject(error)));
      request.end(body);
    });
  };
  const sampleNames = async () => {
    const listed = await call(service, 'GET', `/api/${projectId}/raw-data?category=training&limit=100`, { headers: { 'x-jwt-token': token } });
    expect(listed.status).toBe(200);
    return (listed.body.samples as { filename: string }[]).map((s) => s.filename).sort();
  };
  const health = async (url: string) => {
    const response = await fetch(`${url}/health`);
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as { status: string; error?: string } };
  };
  /** A write's answer on a full disk: done, or refused for want of space with Retry-After; never a 500. */
  const refusedOrDone = (response: { status: number; headers: Headers }, what: string) => {
    expect([200, 503, 507], what).toContain(response.status);
    if (response.status !== 200) expect(Number(response.headers.get('retry-after')), what).toBeGreaterThan(0);
  };

  it('refuses writes with 507 and Retry-After, says why on /health, serves reads, stays up, and takes writes again once space is freed', async () => {
    const before = await upload('before.json', 600);
    expect(before.status).toBe(200);
    const acknowledged = [before.text.trim()];
    // The read models show it before the disk fills (the projections run on a thread of their own and
    // apply it a few ms after its acknowledgement): the reads below are of what is there.
    for (let waited = 0; !(await sampleNames()).includes('before.json'); waited += 20) {
      expect(waited, 'before.json listed within 10 s').toBeLessThan(10_000);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    fill(filler);

    const big = await upload('big.json', 40_000);
    expect([503, 507]).toContain(big.status);
    expect(Number(big.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(big.text).toMatch(/disk full|no storage space/i);

    // Smaller writes: some may still fit in space SQLite holds already; none may answer 500.
    for (let i = 0; i < 20; i++) {
      const small = await upload(`small${i}.json`, 600);
      refusedOrDone(small, `upload ${i}`);
      if (small.status === 200) acknowledged.push(small.text.trim());
    }
    const login = await call(service, 'POST', '/api-login', { body: { username: 'ada', password: 'correct horse battery' } });
    refusedOrDone(login, `login ${JSON.stringify(login.body)}`);
    const created = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Second' } });
    refusedOrDone(created, `project creation ${JSON.stringify(created.body)}`);
    const signedUp = await call(service, 'POST', '/api-user-create', { body: signup({ username: 'grace', email: 'grace@example.com' }) });
    refusedOrDone(signedUp, `sign-up ${JSON.stringify(signedUp.body)}`);

    for (const url of [service.apiUrl, service.ingestionUrl]) {
      const answer = await health(url);
      expect(answer.status).toBe(503);
      expect(answer.body.status).toBe('storage-full');
      expect(answer.body.error).toMatch(/storage full/);
    }
    // Reads are served from what is there.
    expect(await sampleNames()).toEqual(expect.arrayContaining(['before.json']));
    const projects = await call(service, 'GET', '/api/projects', { headers: { 'x-jwt-token': token } });
    expect(projects.status).toBe(200);

    // Past several group-commit windows and a projection retry or two: still running.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(service.child.exitCode).toBeNull();
    expect(service.child.signalCode).toBeNull();

    rmSync(filler);

    // No restart: the next uploads are taken, and /health goes back to ok once the projections caught up.
    await expect.poll(async () => (await upload('after.json', 600)).status, { timeout: 30_000, interval: 500 }).toBe(200);
    const after = await upload('after2.json', 40_000);
    expect(after.status).toBe(200);
    await expect.poll(async () => (await health(service.apiUrl)).body.status, { timeout: 60_000, interval: 500 }).toBe('ok');
    expect((await health(service.ingestionUrl)).body.status).toBe('ok');
    const names = await sampleNames();
    // Every sample acknowledged is there, while full and after (the read models caught up without a restart).
    for (const name of [...acknowledged, 'after2.json']) expect(names).toContain(name);
    expect(service.child.exitCode).toBeNull();
    acknowledgedSoFar = [...acknowledged, 'after2.json'];
  }, 150_000);

  it('refuses a start on a still-full disk with one line naming the file, exits non-zero, and starts once space is freed', async () => {
    service.child.kill('SIGTERM');
    await exitOf(service.child);
    fill(filler);
    const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
      cwd: path.resolve(__dirname, '../..'),
      env: { ...process.env, API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'silent', MONGO_URL: '', EVENTSTORE_URL: '', ROLES: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    await exitOf(child);
    expect(child.exitCode).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines, stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^disk full: /);
    expect(lines[0]).toContain(path.join(dir, 'data'));

    rmSync(filler);
    service = await startServiceProcess(path.join(dir, 'data'), children, { LOG_LEVEL: 'info' });
    const names = await sampleNames();
    for (const name of acknowledgedSoFar) expect(names).toContain(name);
  }, 120_000);
});

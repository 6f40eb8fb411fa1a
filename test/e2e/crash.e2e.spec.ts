import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { signup } from '../support/testService';

/** Starts `main.ts` in a process of its own and resolves with its API address once it serves. */
function startProcess(dataDir: string): Promise<{ child: ChildProcess; apiUrl: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: path.resolve(__dirname, '../..'),
    env: { ...process.env, API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', MONGO_URL: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; apiUrl?: string };
        if (entry.msg === 'service started') resolve({ child, apiUrl: entry.apiUrl! });
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code) => reject(new Error(`service exited with ${code} before it started`)));
  });
}

const post = (apiUrl: string, pathname: string, body: unknown) =>
  fetch(`${apiUrl}/v1${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('a service process killed in the middle of requests', () => {
  let dataDir: string;
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('loses nothing it acknowledged', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-crash-'));
    const first = await startProcess(dataDir);
    children.push(first.child);
    const acknowledged: string[] = [];
    let killed = false;
    const attempts = Array.from({ length: 60 }, (_, i) => `crash${i}`).map(async (username) => {
      try {
        const res = await post(first.apiUrl, '/api-user-create', signup({ username, email: `${username}@example.com` }));
        if (res.status === 200) acknowledged.push(username);
        if (acknowledged.length >= 8 && !killed) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      } catch {
        // the connection died with the process: not acknowledged
      }
    });
    await Promise.all(attempts);
    expect(killed).toBe(true);
    expect(acknowledged.length).toBeGreaterThanOrEqual(8);

    const second = await startProcess(dataDir);
    children.push(second.child);
    for (const username of acknowledged) {
      const login = await post(second.apiUrl, '/api-login', { username, password: 'correct horse battery' });
      expect(login.status, username).toBe(200);
      const token = ((await login.json()) as { token: string }).token;
      const projects = await fetch(`${second.apiUrl}/v1/api/user/projects`, { headers: { 'x-jwt-token': token } });
      expect(((await projects.json()) as { projects: unknown[] }).projects, username).toHaveLength(1);
    }
    second.child.kill('SIGTERM');
  }, 60_000);
});

// A second service on ports already taken says so in one line, naming the port,
// and exits with a non-zero code; before, it died with a raw EADDRINUSE stack.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

describe('a start on a port already in use', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('exits non-zero with one line naming the port, without a stack', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-port-taken-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => holder.close(() => resolve())));
    const port = (holder.address() as net.AddressInfo).port;

    const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
      cwd: path.resolve(__dirname, '../..'),
      env: { ...process.env, API_PORT: String(port), INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', MONGO_URL: '', EVENTSTORE_URL: '', ROLES: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    const lines = stderr.trim().split('\n');
    expect(lines.at(-1)).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    expect(stderr).not.toMatch(/^\s+at /m);
  }, 60_000);
});

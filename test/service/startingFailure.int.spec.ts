import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig, startService } from '../../main';
import { ProjectionRunner } from '../../projections/projectionRunner';

const connects = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

describe('a start whose catch-up fails', () => {
  const folders: string[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const f of folders.splice(0)) await rm(f, { recursive: true, force: true });
  });

  it('had opened its ports, closes them again and rejects with the reason', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-failed-start-'));
    folders.push(dataDir);
    const config = loadConfig({ DATA_DIR: dataDir, API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', THREAD_ROLES: 'none' });
    // A catch-up that fails (on this thread, where the spy is; a thread's failed start: roleThread.int.spec.ts) (embedded read models of another log are rebuilt instead: readModelsAtStart.ts).
    const failure = new Error('the catch-up failed');
    vi.spyOn(ProjectionRunner.prototype, 'start').mockRejectedValueOnce(failure);

    type Line = { msg?: string; apiUrl?: string; ingestionUrl?: string; ingestionTlsUrl?: string };
    const lines: Line[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(JSON.parse(chunk.toString()) as Line), done()) }));
    await expect(startService(config, log)).rejects.toBe(failure);
    const listening = lines.find((l) => l.msg?.startsWith('service listening'));
    const ports = [listening?.apiUrl, listening?.ingestionUrl, listening?.ingestionTlsUrl].map((url) => Number(new URL(url ?? 'http://x').port));
    expect(ports.every((p) => p > 0)).toBe(true);
    expect(await Promise.all(ports.map(connects))).toEqual([false, false, false]);
    expect(lines.some((l) => l.msg === 'service started')).toBe(false);
  });
});

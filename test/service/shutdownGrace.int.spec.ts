// SIGTERM with one stalled upload in progress: the drain waited for it without a deadline (Node
// enforces no request timeout once close() is called), so the process did not exit while the
// upload's connection lived. Now requests get SHUTDOWN_GRACE_MS to finish, then their connections
// are cut, unanswered. (Before: this test timed out at 60 s; the process was still running.)
import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { exitOf, killAll, startServiceProcess } from '../support/serviceProcess';
import { call, registerUser } from '../support/testService';

describe('a service process told to stop while an upload stalls', () => {
  const children: ChildProcess[] = [];
  let dataDir: string | undefined;
  afterAll(async () => {
    await killAll(children);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('exits after the configured grace, without acknowledging the upload', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-shutdown-'));
    // A long upload idle timeout: the stop, not the 408, must end this upload.
    const service = await startServiceProcess(dataDir, children, { SHUTDOWN_GRACE_MS: '500', UPLOAD_IDLE_TIMEOUT_MS: '600000', LOG_LEVEL: 'info' });
    const { token } = await registerUser(service);
    const project = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Stalled' } });
    expect(project.status).toBe(200);

    const { hostname, port } = new URL(service.ingestionUrl);
    const socket = net.connect(Number(port), hostname);
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST /api/training/data HTTP/1.1\r\nHost: ${hostname}\r\nx-api-key: ${String(project.body.apiKey)}\r\nx-file-name: stalled.json\r\n` +
        `content-type: application/json\r\ncontent-length: ${2 * 1024 * 1024}\r\n\r\n` + '['.repeat(64 * 1024),
    );
    // The request is in its handler, reading the body, once the server has read what was sent. From
    // then on a byte now and then: an upload that has stalled all but for its keep-alive trickle
    // (no timeout of Node's ever ends it).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const trickle = setInterval(() => socket.writable && socket.write('['), 1000);
    closed.finally(() => clearInterval(trickle));

    service.child.kill('SIGTERM');
    await exitOf(service.child);
    expect(service.child.exitCode).toBe(0);
    await closed;
    expect(answer).not.toMatch(/^HTTP\/1\.1 200/);
  }, 60_000);
});

// An upload whose body stops coming (a device that lost its network without a reset) used to hold
// its connection and temporary file for Node's 300 s request timeout, checked every 30 s. Now it
// is answered 408 after UPLOAD_IDLE_TIMEOUT_MS without a byte, its connection closed, and nothing
// is stored.
import net from 'node:net';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, registerUser, startTestService, type TestService } from '../support/testService';

/** Sends the headers and `sent` bytes of a body that declares `declared`, then nothing; resolves with what came back once the server closed. */
function stalledUpload(url: string, apiKey: string, declared: number, sent: number): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(
        `POST /api/training/data HTTP/1.1\r\nHost: ${hostname}\r\nx-api-key: ${apiKey}\r\nx-file-name: stalled.json\r\n` +
          `content-type: application/json\r\ncontent-length: ${declared}\r\n\r\n` +
          '['.repeat(sent),
      );
    });
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('an upload whose body stalls', () => {
  let service: TestService;
  let token: string;
  let projectId: number;
  let apiKey: string;

  beforeAll(async () => {
    service = await startTestService({ mongo: false, env: { UPLOAD_IDLE_TIMEOUT_MS: '300' } });
    token = (await registerUser(service)).token;
    const project = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Stalled' } });
    projectId = Number(project.body.id);
    apiKey = String(project.body.apiKey);
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('is answered 408 once it sent nothing for the configured time, its connection closed, and nothing is stored', async () => {
    // Over the in-memory limit: the body streams to a temporary file, which must go too.
    const answer = await stalledUpload(service.ingestionUrl!, apiKey, 2 * 1024 * 1024, 64 * 1024);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('sent nothing');
    expect(answer.toLowerCase()).toContain('connection: close');

    const samples = await call(service, 'GET', `/api/${projectId}/raw-data?category=training`, { headers: { 'x-jwt-token': token } });
    expect(samples.status).toBe(200);
    expect(samples.body.samples).toEqual([]);
    // incoming/<process>-<random>/: the folders stay, no file is left in them.
    // The handler removes it once its read of the body failed, just after the answer.
    const incoming = path.join(service.config.dataDir, 'incoming');
    const left = async () => (await Promise.all((await readdir(incoming)).map((folder) => readdir(path.join(incoming, folder))))).flat();
    await expect.poll(left, { timeout: 5000 }).toEqual([]);
  }, 30_000);

  it('leaves a body that keeps coming, however slowly, to finish', async () => {
    const { hostname, port } = new URL(service.ingestionUrl!);
    const body = JSON.stringify({ protected: { ver: 'v1', alg: 'none' }, signature: '0', payload: { device_type: 'T', interval_ms: 10, sensors: [{ name: 'x', units: 'u' }], values: [[1], [2]] } });
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, async () => {
        socket.write(`POST /api/training/data HTTP/1.1\r\nHost: ${hostname}\r\nx-api-key: ${apiKey}\r\nx-file-name: slow.json\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`);
        // Each piece within the idle time, the whole longer than it.
        for (let i = 0; i < body.length; i += 20) {
          socket.write(body.slice(i, i + 20));
          await new Promise((r) => setTimeout(r, 100));
        }
      });
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  }, 30_000);
});

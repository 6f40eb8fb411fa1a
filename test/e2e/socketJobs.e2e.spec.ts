// Following a job through the official SDK (edge-impulse-api, unmodified): a socket token, the
// websocket, the output lines through the data callback, including lines a worker in another
// process writes. The job is simulated by appending its stream's events, as the worker will.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { EdgeImpulseApi } from 'edge-impulse-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobStream } from '../../domain/job/jobEvents';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { startTestService, type TestService } from '../support/testService';

const metadata = () => ({ actor: 'system:test', correlationId: 'sdk-socket-test', time: new Date().toISOString() });
const event = (type: string, data: Record<string, unknown>) => ({ id: randomUUID(), type, data, metadata: metadata() });

// Category key 'simulated': no worker has a runner for it, so the service's own worker leaves the job
// to the test (generate-features now has a real runner).
async function startJob(events: EventStore, jobId: number, projectId: number): Promise<void> {
  const now = new Date().toISOString();
  await events.appendToStream(
    jobStream(jobId),
    [
      event('JobRequested', { jobId, projectId, organizationId: null, category: 'Generate features', categoryKey: 'simulated', key: '3', parameters: {}, jobNotificationUids: [], createdByUserId: null, created: now }),
      event('JobStarted', { jobId, workerId: 'test-worker', attempt: 1, started: now }),
      event('JobOutputWritten', { jobId, lines: [{ created: now, data: 'Scheduling job in cluster...\n', logLevel: 'info' }] }),
    ],
    'no_stream',
  );
}

/** The worker in another process: appends `lines` output lines and the job's successful end (test/api/socketLogWriter.ts). */
function workInAnotherProcess(dataDir: string, jobId: number, lines: number): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/api/socketLogWriter.ts', dataDir, String(jobId), String(lines)], { cwd: path.resolve(__dirname, '../..'), stdio: 'ignore' });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(child.pid!) : reject(new Error(`the worker process exited with ${code}`))));
  });
}

async function sdkFor(service: TestService): Promise<{ api: EdgeImpulseApi; projectId: number }> {
  const api = new EdgeImpulseApi({ endpoint: service.apiUrl });
  await api.user.createUser({ name: 'Ada Lovelace', username: 'ada', email: 'ada@example.com', password: 'correct horse battery', privacyPolicy: true, turnstileResponse: 'ok' });
  await api.authenticate({ method: 'jwtToken', jwtToken: (await api.login.login({ username: 'ada', password: 'correct horse battery' })).token! });
  const { id: projectId } = await api.projects.createProject({ projectName: 'Followed through the SDK' });
  return { api, projectId };
}

// runJobUntilCompletion polls GET /api/{projectId}/jobs/{jobId}/status every 5 s for
// job.finishedSuccessful, answered by the job read model from the events this test appends.
describe('runJobUntilCompletion of the official SDK', () => {
  let service: TestService;
  let api: EdgeImpulseApi;
  let projectId: number;

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    ({ api, projectId } = await sdkFor(service));
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('completes, having passed every output line to the callback, including those written by another process', async () => {
    const jobId = 91_001;
    await startJob(service.stores.events, jobId, projectId);
    const received: string[] = [];
    const running = api.runJobUntilCompletion({ type: 'project', projectId, jobId }, (data) => received.push(data));
    // Let the SDK connect and replay before the worker writes the rest.
    for (let i = 0; i < 100 && !received.includes('Scheduling job in cluster...\n'); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const pid = await workInAnotherProcess(service.config.dataDir, jobId, 3);
    await running;
    expect(received).toEqual(['Connected to job\n', 'Scheduling job in cluster...\n', ...[0, 1, 2].map((i) => `line ${i} from process ${pid}\n`)]);
  }, 60_000);

  it('fails with "Job failed" when the job ends unsuccessfully', async () => {
    const jobId = 91_002;
    await startJob(service.stores.events, jobId, projectId);
    await service.stores.events.appendToStream(
      jobStream(jobId),
      [event('JobFinished', { jobId, finishedSuccessful: false, reason: 'failed', cancelled: false, computeTimeMs: 1, finished: new Date().toISOString() })],
      'stream_exists',
    );
    await expect(api.runJobUntilCompletion({ type: 'project', projectId, jobId })).rejects.toThrow('Job failed');
  }, 60_000);
});

/**
 * Until the status route lands: the same SDK code that runJobUntilCompletion runs (its
 * `waitForJobImpl`, with its own token fetch and websocket), called with a status check that reads
 * the job's end from the log instead of polling the route. Everything on the socket is the SDK's.
 */
describe("the official SDK's job websocket code against the service", () => {
  let service: TestService;
  let api: EdgeImpulseApi;
  let projectId: number;

  type WaitForJob = (
    jobId: number,
    dataCallback: (data: string) => void,
    getWebsocket: () => Promise<unknown>,
    getJobStatus: () => Promise<{ job?: { finishedSuccessful?: boolean } }>,
  ) => Promise<void>;

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    ({ api, projectId } = await sdkFor(service));
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('passes every output line to the callback, including those written by another process', async () => {
    const jobId = 92_001;
    await startJob(service.stores.events, jobId, projectId);
    const sdk = api as unknown as { waitForJobImpl: WaitForJob; getProjectWebsocket(projectId: number): Promise<unknown> };
    const statusFromLog = async () => {
      const ended = (await service.stores.events.readStream(jobStream(jobId))).find((e) => e.type === 'JobFinished');
      return { job: ended ? { finishedSuccessful: ended.data.finishedSuccessful === true } : {} };
    };
    const received: string[] = [];
    const running = sdk.waitForJobImpl.call(api, jobId, (data) => received.push(data), () => sdk.getProjectWebsocket.call(api, projectId), statusFromLog);
    for (let i = 0; i < 100 && !received.includes('Scheduling job in cluster...\n'); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received).toEqual(['Connected to job\n', 'Scheduling job in cluster...\n']);
    const pid = await workInAnotherProcess(service.config.dataDir, jobId, 3);
    await running;
    expect(received).toEqual(['Connected to job\n', 'Scheduling job in cluster...\n', ...[0, 1, 2].map((i) => `line ${i} from process ${pid}\n`)]);
  }, 60_000);

  it('gets a socket token in the shape the SDK types', async () => {
    const res = await api.projects.getSocketToken(projectId);
    expect(res.success).toBe(true);
    expect(typeof res.token.socketToken).toBe('string');
    // The SDK turns ISO times into Dates.
    expect(res.token.expires).toBeInstanceOf(Date);
    expect(res.token.expires.getTime()).toBeGreaterThan(Date.now() + 9 * 60_000);
  });
});

// The job websocket against the real service, through a client that speaks exactly as the SDK's
// runJobUntilCompletion does (test/api/socketClient.ts). Jobs are simulated by appending the job
// stream's events to the service's event store, as the worker will.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TokenService } from '../../api/auth/tokens';
import { attachJobSocket, type JobSocketServer } from '../../api/socket/jobSocketServer';
import { jobStream } from '../../domain/job/jobEvents';
import { ApiKeyQueries } from '../../projections/apiKeys/apiKeyQueries';
import { OrganizationQueries } from '../../projections/organizations/organizationQueries';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import { UserQueries } from '../../projections/users/userQueries';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { call, registerUser, startTestService, type TestService } from '../support/testService';
import { SdkSocket, stalledClient } from './socketClient';
import { dataOf, finish, line, requestJob, unusedJobId, writeOutput } from './simulatedJobs';

describe('the job websocket', () => {
  let service: TestService;
  let events: EventStore;
  let ada: { id: number; token: string };
  let bob: { id: number; token: string };
  let projectId: number;
  let otherProjectId: number;
  let apiKey: string;
  let secret: string;
  const open: SdkSocket[] = [];

  const socketToken = async (headers: Record<string, string> = { 'x-jwt-token': ada.token }, project = projectId) => {
    const res = await call(service, 'GET', `/api/${project}/socket-token`, { headers });
    expect(res.status).toBe(200);
    return (res.body.token as { socketToken: string }).socketToken;
  };
  const connect = async (token?: string) => SdkSocket.greeted(service.apiUrl, token ?? (await socketToken()), open);

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    events = service.stores.events;
    await registerUser(service, 'staffer');
    ada = await registerUser(service, 'ada');
    bob = await registerUser(service, 'bob');
    const created = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': ada.token }, body: { projectName: 'Followed' } });
    projectId = Number(created.body.id);
    apiKey = String(created.body.apiKey);
    otherProjectId = Number((await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': bob.token }, body: { projectName: 'Elsewhere' } })).body.id);
    secret = (await readFile(path.join(service.config.dataDir, 'jwt-secret'), 'utf8')).trim();
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await service?.destroy();
  });

  it('opens with the Engine.IO 3 handshake and hello version 1, and answers pings', async () => {
    const socket = await connect();
    const [openPacket, connectPacket, hello] = socket.frames;
    expect(openPacket).toMatch(/^0\{/);
    expect(JSON.parse(openPacket!.slice(1))).toMatchObject({ sid: expect.any(String), upgrades: [], pingInterval: expect.any(Number), pingTimeout: expect.any(Number) });
    expect(connectPacket).toBe('40');
    expect(hello).toBe('42["hello",{"hello":{"version":1}}]');
    // The SDK's keep-alive: a ws ping and the text `2` every 5 s; EIO3 answers `3`.
    socket.ws.ping();
    socket.send('2');
    await socket.until(() => socket.frames.includes('3'), 'the pong');
  });

  it('replays the output, streams new lines live, and ends with job-finished', async () => {
    const jobId = await requestJob(events, projectId);
    await writeOutput(events, jobId, [line('Creating windows...\n'), line('Window 1/2\n')]);
    await writeOutput(events, jobId, [line('Window 2/2\n')]);
    const socket = await connect();
    socket.startLogStream(jobId);
    await socket.until(() => dataOf(socket, jobId).length === 3, 'the replay');
    expect(dataOf(socket, jobId)).toEqual(['Creating windows...\n', 'Window 1/2\n', 'Window 2/2\n']);
    expect(socket.frames).toContain(`42${JSON.stringify([`job-data-${jobId}`, { data: 'Window 2/2\n', logLevel: 'info', created: socket.named(`job-data-${jobId}`)[2]!.payload.created }])}`);

    await writeOutput(events, jobId, [line('Scaling features\n'), line('Done\n')]);
    await socket.until(() => dataOf(socket, jobId).length === 5, 'the live lines');
    expect(dataOf(socket, jobId).slice(3)).toEqual(['Scaling features\n', 'Done\n']);

    await finish(events, jobId, true);
    await socket.until(() => socket.named(`job-finished-${jobId}`).length === 1, 'job-finished');
    expect(socket.frames.at(-1)).toBe(`42["job-finished-${jobId}",{"success":true}]`);
    // Nothing after the end (a stray late event is not sent), and the socket stays open.
    await writeOutput(events, jobId, [line('after the end\n')]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(dataOf(socket, jobId)).toHaveLength(5);
    expect(socket.closed).toBe(false);
  });

  it('sends job-finished with success false for a failed job, also when it ended before the client asked', async () => {
    const jobId = await requestJob(events, projectId);
    await writeOutput(events, jobId, [line('Out of memory\n')]);
    await finish(events, jobId, false);
    const socket = await connect(await socketToken({ 'x-api-key': apiKey }));
    socket.startLogStream(jobId);
    await socket.until(() => socket.named(`job-finished-${jobId}`).length === 1, 'job-finished');
    expect(dataOf(socket, jobId)).toEqual(['Out of memory\n']);
    expect(socket.named(`job-finished-${jobId}`)[0]!.payload).toEqual({ success: false });
  });

  it('replays only the lines written after lastReceivedTimestamp', async () => {
    const jobId = await requestJob(events, projectId);
    const t0 = Date.parse('2026-01-01T10:00:00.000Z');
    await writeOutput(events, jobId, [line('one\n', new Date(t0)), line('two\n', new Date(t0 + 1000))]);
    await writeOutput(events, jobId, [line('three\n', new Date(t0 + 2000))]);
    const socket = await connect();
    socket.startLogStream(jobId, t0 + 1000);
    await writeOutput(events, jobId, [line('four\n', new Date(t0 + 3000))]);
    await socket.until(() => dataOf(socket, jobId).length === 2, 'two lines');
    expect(dataOf(socket, jobId)).toEqual(['three\n', 'four\n']);
    // An ISO time works too; asking again restarts the stream from it.
    socket.startLogStream(jobId, new Date(t0).toISOString());
    await socket.until(() => dataOf(socket, jobId).length === 5, 'the second replay');
    expect(dataOf(socket, jobId).slice(2)).toEqual(['two\n', 'three\n', 'four\n']);
  });

  it("streams nothing of another project's job, and answers it exactly like an unknown job", async () => {
    const foreign = await requestJob(events, otherProjectId);
    await writeOutput(events, foreign, [line('secret output\n')]);
    const unknown = unusedJobId();
    const socket = await connect();
    socket.startLogStream(foreign);
    socket.startLogStream(unknown);
    await socket.until(() => socket.named(`job-error-${foreign}`).length === 1 && socket.named(`job-error-${unknown}`).length === 1, 'the refusals');
    await writeOutput(events, foreign, [line('more secret output\n')]);
    await finish(events, foreign, true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(socket.frames.join('\n')).not.toContain('secret');
    expect(socket.named(`job-finished-${foreign}`)).toEqual([]);
    const text = (id: number) => String(socket.named(`job-error-${id}`)[0]!.payload.error).replace(String(id), 'N');
    expect(text(foreign)).toBe(text(unknown));
  });

  it('refuses the handshake without a valid socket token', async () => {
    const refusal = (token: string) => SdkSocket.open(service.apiUrl, token).then(
      (s) => (s.close(), 'accepted'),
      (error: Error) => error.message.replace(/^handshake refused: 400 /, ''),
    );
    const service_ = new TokenService(secret);
    const expired = await service_.socket.issue({ kind: 'user', userId: ada.id, sessionVersion: 0 }, projectId, new Date(Date.now() - 11 * 60_000));
    const forged = await new TokenService('not-the-service-secret-but-long-enough-000').socket.issue({ kind: 'user', userId: ada.id, sessionVersion: 0 }, projectId, new Date());
    const stranger = await service_.socket.issue({ kind: 'user', userId: bob.id, sessionVersion: 0 }, projectId, new Date());
    const nobody = await service_.socket.issue({ kind: 'user', userId: ada.id + 1000, sessionVersion: 0 }, projectId, new Date());
    const oldSession = await service_.socket.issue({ kind: 'user', userId: ada.id, sessionVersion: 7 }, projectId, new Date());
    const noProject = await service_.socket.issue({ kind: 'user', userId: ada.id, sessionVersion: 0 }, 999_999, new Date());
    // Engine.IO refuses an upgrade with 400 and the reason as the body.
    expect(await refusal(expired.socketToken)).toBe('Socket token has expired, get a new one');
    expect(await refusal(forged.socketToken)).toBe('Invalid socket token');
    expect(await refusal(ada.token)).toBe('Invalid socket token');
    expect(await refusal('')).toMatch(/^A socket token is required/);
    expect(await refusal('garbage')).toBe('Invalid socket token');
    // Signed by the service, but for a user who is not (or no longer) a collaborator, or a project
    // that is gone, or a user who is not there, or a session that ended: REST's own refusals.
    expect(await refusal(stranger.socketToken)).toBe(`You are not a collaborator on project ${projectId}`);
    expect(await refusal(noProject.socketToken)).toBe('Project 999999 not found');
    expect(await refusal(nobody.socketToken)).toBe('The user of this token no longer exists');
    expect(await refusal(oldSession.socketToken)).toBe('This session has ended (the password was changed): log in again');
    // And the same service accepts a good one.
    expect(await refusal(await socketToken())).toBe('accepted');
  });

  it('survives hostile frames and keeps serving', async () => {
    const jobId = await requestJob(events, projectId);
    const socket = await connect();
    for (const frame of ['42[', '4{}', 'xyz', '42["start-log-stream","5"]', '42["start-log-stream",{"jobId":-1}]', '42["start-log-stream",{"jobId":1e300}]', '42["start-log-stream",{"jobId":"7"}]', '42["start-log-stream",null]', '42["start-log-stream",{"jobId":1,"lastReceivedTimestamp":{"$gt":0}}]', '451-["start-log-stream",{"_placeholder":true,"num":0}]']) {
      if (!socket.closed) socket.send(frame);
    }
    // A frame over the limit closes that socket only.
    const big = await connect();
    big.send('42' + JSON.stringify(['start-log-stream', { jobId, pad: 'x'.repeat(100_000) }]));
    await big.until(() => big.closed, 'the oversized frame to close its socket');
    // The service goes on: a new socket streams a job.
    const fresh = await connect();
    fresh.startLogStream(jobId);
    await writeOutput(events, jobId, [line('still here\n')]);
    await fresh.until(() => dataOf(fresh, jobId).length === 1, 'a line after the hostile frames');
    expect((await call(service, 'GET', '/api/user', { headers: { 'x-jwt-token': ada.token } })).status).toBe(200);
  });

  it('streams the output of a job written by another process', async () => {
    const jobId = await requestJob(events, projectId);
    await writeOutput(events, jobId, [line('written here\n')]);
    const socket = await connect();
    socket.startLogStream(jobId);
    await socket.until(() => dataOf(socket, jobId).length === 1, 'the replay');
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/api/socketLogWriter.ts', service.config.dataDir, String(jobId), '5'], {
      cwd: path.resolve(__dirname, '../..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, output).toBe(0);
    await socket.until(() => socket.named(`job-finished-${jobId}`).length === 1, 'the end written by the other process');
    const lines = dataOf(socket, jobId);
    expect(lines).toHaveLength(6);
    expect(lines.slice(1)).toEqual([0, 1, 2, 3, 4].map((i) => `line ${i} from process ${child.pid}\n`));
    expect(socket.named(`job-finished-${jobId}`)[0]!.payload).toEqual({ success: true });
  }, 30_000);

  it('closes open sockets when the service stops, without waiting for the clients', async () => {
    const jobId = await requestJob(events, projectId);
    const socket = await connect();
    socket.startLogStream(jobId);
    await writeOutput(events, jobId, [line('before the restart\n')]);
    await socket.until(() => dataOf(socket, jobId).length === 1, 'a line');
    const started = Date.now();
    service = await service.restart();
    events = service.stores.events;
    expect(Date.now() - started).toBeLessThan(5_000);
    await socket.until(() => socket.closed, 'the socket to close');
    // The restarted service serves the job again, from the same log.
    const again = await connect();
    again.startLogStream(jobId);
    await again.until(() => dataOf(again, jobId).length === 1, 'the replay after the restart');
  }, 30_000);
});

/** The socket server attached to a server of its own, on the service's stores, with small limits to reach them in a test. */
describe('the job websocket under load', () => {
  let service: TestService;
  let events: EventStore;
  let ada: { id: number; token: string };
  let projectId: number;
  let server: http.Server;
  let jobSocket: JobSocketServer;
  let url: string;
  let tokens: TokenService;
  const open: SdkSocket[] = [];

  const connect = async () => {
    const { socketToken } = await tokens.socket.issue({ kind: 'user', userId: ada.id, sessionVersion: 0 }, projectId, new Date());
    return SdkSocket.greeted(url, socketToken, open);
  };

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    events = service.stores.events;
    ada = await registerUser(service, 'ada');
    projectId = Number((await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': ada.token }, body: { projectName: 'Loaded' } })).body.id);
    tokens = new TokenService((await readFile(path.join(service.config.dataDir, 'jwt-secret'), 'utf8')).trim());
    server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    jobSocket = attachJobSocket(server, {
      events,
      tokens: tokens.socket,
      access: {
        users: new UserQueries(service.stores.readStore),
        apiKeys: new ApiKeyQueries(service.stores.readStore),
        projects: new ProjectQueries(service.stores.readStore),
        organizations: new OrganizationQueries(service.stores.readStore),
        settings: { staffUsernames: new Set() },
      },
      log: pino({ level: 'silent' }),
      limits: { stallTimeoutMs: 1_000, highWaterBytes: 64 * 1024, pageSize: 16, feedIdleStopMs: 200, maxSockets: 300 },
    });
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await jobSocket?.close();
    await new Promise((resolve) => server?.close(resolve));
    await service?.destroy();
  });

  it('serves many sockets from one subscription to the log, and ends it once they are gone', async () => {
    const subscribe = vi.spyOn(events, 'subscribeToAll');
    const jobId = await requestJob(events, projectId);
    const sockets = await Promise.all(Array.from({ length: 200 }, () => connect()));
    for (const s of sockets) s.startLogStream(jobId);
    await writeOutput(events, jobId, [line('to everyone\n')]);
    await Promise.all(sockets.map((s) => s.until(() => dataOf(s, jobId).length === 1, 'the shared line')));
    expect(subscribe).toHaveBeenCalledTimes(1);
    expect(jobSocket.feed.followed().get(jobStream(jobId))).toBe(200);
    const subscription = subscribe.mock.results[0]!.value as { close(): Promise<void> };
    const close = vi.spyOn(subscription, 'close');
    for (const s of sockets) s.close();
    for (let i = 0; i < 100 && jobSocket.feed.followed().size > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(jobSocket.feed.followed().size).toBe(0);
    // The subscription outlives the last follower by feedIdleStopMs, then closes.
    for (let i = 0; i < 100 && close.mock.calls.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(close).toHaveBeenCalled();
    subscribe.mockRestore();
  }, 30_000);

  it('replays a large log to a reader in full and in order, and drops a client that stops reading', async () => {
    const jobId = await requestJob(events, projectId);
    // 8 MB of output: 200 events of 40 lines of 1 KB.
    const text = (i: number, j: number) => `${i}:${j} ${'x'.repeat(1000)}\n`;
    for (let i = 0; i < 200; i++) await writeOutput(events, jobId, Array.from({ length: 40 }, (_, j) => line(text(i, j))));
    await finish(events, jobId, true);

    const reader = await connect();
    const replayStart = Date.now();
    reader.startLogStream(jobId);
    await reader.until(() => reader.named(`job-finished-${jobId}`).length === 1, 'the whole replay', 30_000);
    if (process.env.DEBUG_SOCKET) console.log(`replayed 8000 lines (8 MB) in ${Date.now() - replayStart} ms`);
    const received = dataOf(reader, jobId);
    expect(received).toHaveLength(8000);
    expect(received[0]).toBe(text(0, 0));
    expect(received[7999]).toBe(text(199, 39));

    reader.close();
    for (let i = 0; i < 100 && jobSocket.io.engine.clientsCount > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(jobSocket.io.engine.clientsCount).toBe(0);

    // A client that reads nothing.
    const { socketToken } = await tokens.socket.issue({ kind: 'user', userId: ada.id, sessionVersion: 0 }, projectId, new Date());
    const stalled = await stalledClient(url, socketToken, jobId);
    // What waits for it on the server: Engine.IO's write buffer and the TCP socket's.
    const pending = () => {
      let bytes = 0;
      for (const s of jobSocket.io.sockets.sockets.values()) {
        const buffer = (s.conn as unknown as { writeBuffer: { data?: unknown }[] }).writeBuffer;
        bytes += s.request.socket.writableLength + buffer.reduce((sum, p) => sum + (typeof p.data === 'string' ? p.data.length : 0), 0);
      }
      return bytes;
    };
    let peak = 0;
    const start = Date.now();
    while (jobSocket.io.engine.clientsCount > 0 && Date.now() - start < 10_000) {
      peak = Math.max(peak, pending());
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Dropped once it made no progress for stallTimeoutMs; what waited for it stayed near the
    // high-water mark (64 KB, plus the one event of 40 KB that crosses it), never the 8 MB log.
    expect(jobSocket.io.engine.clientsCount).toBe(0);
    if (process.env.DEBUG_SOCKET) console.log(`stalled client dropped after ${Date.now() - start} ms; peak pending ${peak} bytes`);
    expect(Date.now() - start).toBeGreaterThanOrEqual(1_000);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(64 * 1024 + 2 * 41 * 1024);
    stalled.destroy();
  }, 60_000);
});

// Sampling progress reaches the job websocket clients of the project, through a client that speaks
// as the SDK's runJobUntilCompletion does (socket.io 2 over a plain websocket, socketClient.ts). The
// device's connection and its progress are simulated by the events and commands the remote role uses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDevice, reportSamplingProgress } from '../../commands/devices/deviceCommands';
import { systemContext } from '../../commands/commandContext';
import { IdAllocator } from '../../commands/idAllocator';
import { call, registerUser, startTestService, type TestService } from '../support/testService';
import { readModelsCaughtUp } from '../support/readModels';
import { SdkSocket } from './socketClient';

describe('sampling progress on the job websocket', () => {
  let service: TestService;
  let ada: { id: number; token: string };
  let bob: { id: number; token: string };
  let adaProject: number;
  let bobProject: number;
  const open: SdkSocket[] = [];
  const deps = () => ({ events: service.stores.events, ids: new IdAllocator(service.stores.events), devices: { byId: async () => null } });
  const camera = { name: 'Camera (640x480)', maxSampleLengthS: 60000, frequencies: [] };

  const socketFor = async (user: { token: string }, projectId: number) => {
    const res = await call(service, 'GET', `/api/${projectId}/socket-token`, { headers: { 'x-jwt-token': user.token } });
    expect(res.status).toBe(200);
    return SdkSocket.greeted(service.apiUrl, (res.body.token as { socketToken: string }).socketToken, open);
  };
  const connect = async (projectId: number, deviceId: string) => {
    await connectDevice(deps(), { projectId, deviceId, deviceType: 'EDGE_IMPULSE_LINUX', connectionId: `c-${projectId}-${deviceId}`, host: '10.0.0.7', mode: 'ingestion', sensors: [camera], supportsSnapshotStreaming: false }, systemContext('test'));
    await readModelsCaughtUp(service);
  };
  const startSampling = async (user: { token: string }, projectId: number, deviceId: string) => {
    const res = await call(service, 'POST', `/api/${projectId}/device/${deviceId}/start-sampling`, {
      headers: { 'x-jwt-token': user.token },
      body: { label: 'cat', lengthMs: 1000, category: 'training', intervalMs: 1, sensor: camera.name },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return Number(res.body.id);
  };
  const report = (projectId: number, deviceId: string, stage: 'started' | 'reading' | 'finished' | 'failed', extra: { progressPercentage?: number; error?: string } = {}) =>
    reportSamplingProgress(deps(), { projectId, deviceId, connectionId: `c-${projectId}-${deviceId}`, stage, ...extra }, systemContext('test'));

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    await registerUser(service, 'staffer');
    ada = await registerUser(service, 'ada');
    bob = await registerUser(service, 'bob');
    adaProject = Number((await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': ada.token }, body: { projectName: 'Ada cams' } })).body.id);
    bobProject = Number((await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': bob.token }, body: { projectName: 'Bob cams' } })).body.id);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await service?.destroy();
  });

  it("sends a project's sockets its sampling requests and their progress, and nothing of another project's", async () => {
    const adaSocket = await socketFor(ada, adaProject);
    const bobSocket = await socketFor(bob, bobProject);
    await connect(adaProject, 'ada-cam');
    await connect(bobProject, 'bob-cam');

    const bobId = await startSampling(bob, bobProject, 'bob-cam');
    await report(bobProject, 'bob-cam', 'failed', { error: 'bob secret failure' });
    const id = await startSampling(ada, adaProject, 'ada-cam');
    await report(adaProject, 'ada-cam', 'started');
    await report(adaProject, 'ada-cam', 'reading', { progressPercentage: 40 });
    await report(adaProject, 'ada-cam', 'finished');

    await adaSocket.until(() => adaSocket.named('sampling-progress').length === 4, "ada's progress");
    expect(adaSocket.named('sampling-progress').map((m) => m.payload)).toEqual([
      { id, deviceId: 'ada-cam', stage: 'requested' },
      { id, deviceId: 'ada-cam', stage: 'started' },
      { id, deviceId: 'ada-cam', stage: 'reading', progressPercentage: 40 },
      { id, deviceId: 'ada-cam', stage: 'finished' },
    ]);
    // Bob's socket had his project's request and failure (which came first), and nothing of Ada's.
    await bobSocket.until(() => bobSocket.named('sampling-progress').length === 2, "bob's progress");
    expect(bobSocket.named('sampling-progress').map((m) => m.payload)).toEqual([
      { id: bobId, deviceId: 'bob-cam', stage: 'requested' },
      { id: bobId, deviceId: 'bob-cam', stage: 'failed', error: 'bob secret failure' },
    ]);
    expect(bobSocket.frames.join('\n')).not.toContain('ada-cam');
    expect(adaSocket.frames.join('\n')).not.toContain('bob-cam');
    expect(adaSocket.frames.join('\n')).not.toContain('bob secret');
    // Every frame is one the SDK can read: its own hello still first, the progress as named events.
    expect(adaSocket.frames.filter((f) => f.startsWith('42')).map((f) => JSON.parse(f.slice(2))[0])).toEqual(['hello', 'sampling-progress', 'sampling-progress', 'sampling-progress', 'sampling-progress']);
  });
});

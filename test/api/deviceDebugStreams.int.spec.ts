// The SDK's device debug streams (startDeviceSnapshotDebugStream, startDeviceInferenceDebugStream,
// keepDeviceDebugStreamAlive, stopDeviceDebugStream) are not built: for a device of the project they
// answer 400 saying so, after the same access checks as startSampling, and record nothing.
import { EdgeImpulseApi } from 'edge-impulse-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adaAndBob, call, startTestService, type TestService } from '../support/testService';

describe('device debug streams', () => {
  let service: TestService;
  let ada: string;
  let bob: string;
  let projectId: number;
  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    ({ ada, bob } = await adaAndBob(service));
    projectId = (await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': ada }, body: { projectName: 'Streams' } })).body.id as number;
    const created = await call(service, 'POST', `/api/${projectId}/devices/create`, { headers: { 'x-jwt-token': ada }, body: { deviceId: 'cam-1', deviceType: 'EDGE_IMPULSE_LINUX', ifNotExists: false } });
    expect(created.status).toBe(200);
  });
  afterAll(async () => service?.destroy());

  const routes = [
    ['snapshot/start', { resolution: 'low' }],
    ['inference/start', {}],
    ['keep-alive', { streamId: 1 }],
    ['stop', { streamId: 1 }],
  ] as const;

  it('answers that streaming is not supported, and records nothing', async () => {
    for (const [path, body] of routes) {
      const before = await service.stores.events.headPosition();
      const res = await call(service, 'POST', `/api/${projectId}/device/cam-1/debug-stream/${path}`, { headers: { 'x-jwt-token': ada }, body });
      expect(res.status, path).toBe(400);
      expect(res.body.success).toBe(false);
      expect(String(res.body.error)).toMatch(/not supported/);
      expect(await service.stores.events.headPosition()).toBe(before);
    }
  });

  it('says so through the official SDK', async () => {
    const api = new EdgeImpulseApi({ endpoint: service.apiUrl });
    await api.authenticate({ method: 'jwtToken', jwtToken: ada });
    await expect(api.devices.startDeviceSnapshotDebugStream(projectId, 'cam-1', { resolution: 'high' })).rejects.toThrow(/Snapshot streaming is not supported/);
  });

  it('checks access, the device and the body first', async () => {
    const stranger = await call(service, 'POST', `/api/${projectId}/device/cam-1/debug-stream/snapshot/start`, { headers: { 'x-jwt-token': bob }, body: { resolution: 'low' } });
    expect([403, 404]).toContain(stranger.status);
    const unknown = await call(service, 'POST', `/api/${projectId}/device/nope/debug-stream/snapshot/start`, { headers: { 'x-jwt-token': ada }, body: { resolution: 'low' } });
    expect(unknown.status).toBe(404);
    const badBody = await call(service, 'POST', `/api/${projectId}/device/cam-1/debug-stream/snapshot/start`, { headers: { 'x-jwt-token': ada }, body: { resolution: 'huge' } });
    expect(badBody.status).toBe(400);
    expect(String(badBody.body.error)).not.toMatch(/not supported/);
  });
});

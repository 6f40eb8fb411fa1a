// Access that ends ends the device's socket at once: a revoked key, an expired key (no event: found
// by the server's periodic check), a deleted project or a deleted device. The socket is closed
// (1008, the reason sent), the device is recorded disconnected (`access-ended`), and no sampling
// request (which carries the project's HMAC key) reaches it afterwards.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceStream } from '../../domain/device/deviceEvents';
import { accessEndingOf, KEY_ENDED } from '../../remote/accessEndings';
import { readModelsCaughtUp } from '../support/readModels';
import { connectDevice, linuxHello, type TestDevice } from '../support/remoteDevice';
import { adaWithProject, call, startTestService, type TestService } from '../support/testService';

describe('accessEndingOf', () => {
  const held = { projectId: 3, deviceId: 'dev', apiKeyId: 7 };
  it('names the events that end a held socket, and only those', () => {
    expect(accessEndingOf({ type: 'ApiKeyRevoked', data: { projectId: 3, apiKeyId: 7 } }, held)).toBe(KEY_ENDED);
    expect(accessEndingOf({ type: 'ApiKeyRevoked', data: { projectId: 3, apiKeyId: 8 } }, held)).toBeUndefined();
    expect(accessEndingOf({ type: 'ProjectDeleted', data: { projectId: 3 } }, held)).toMatch(/deleted/);
    expect(accessEndingOf({ type: 'ProjectDeleted', data: { projectId: 4 } }, held)).toBeUndefined();
    expect(accessEndingOf({ type: 'DeviceDeleted', data: { projectId: 3, deviceId: 'dev' } }, held)).toMatch(/deleted/);
    expect(accessEndingOf({ type: 'DeviceDeleted', data: { projectId: 3, deviceId: 'other' } }, held)).toBeUndefined();
    expect(accessEndingOf({ type: 'DeviceRenamed', data: { projectId: 3, deviceId: 'dev' } }, held)).toBeUndefined();
  });
});

for (const [title, recheckMs, cases] of [
  ['a device socket whose access ends (by its event: the periodic check is too slow to matter here)', 600_000, 'events'],
  ['a device socket whose key expires (no event: the periodic check)', 200, 'expiry'],
] as const) describe(title, () => {
  let service: TestService;
  let ada: Record<string, string>;
  let projectId: number;
  const open: TestDevice[] = [];

  beforeAll(async () => {
    service = await startTestService({ mongo: false, remoteLimits: { accessRecheckMs: recheckMs } });
    ({ ada, projectId } = await adaWithProject(service, 'Access endings'));
  });
  afterAll(async () => {
    for (const d of open) d.ws.terminate();
    await service?.destroy();
  });

  const addKey = async (body: Record<string, unknown> = {}) => {
    const res = await call(service, 'POST', `/api/${projectId}/apikeys`, { headers: ada, body: { name: 'device', role: 'ingestion_deployment', ...body } });
    expect(res.status).toBe(200);
    return { id: res.body.id as number, apiKey: res.body.apiKey as string };
  };
  const connected = async (apiKey: string, deviceId: string, project = projectId) => {
    const d = await connectDevice(service.remoteMgmtUrl!);
    open.push(d);
    d.send(linuxHello(apiKey, deviceId));
    expect(await d.next()).toMatchObject({ hello: true });
    await readModelsCaughtUp(service);
    const device = (await call(service, 'GET', `/api/${project}/device/${deviceId}`, { headers: ada })).body.device as Record<string, unknown>;
    expect(device.remote_mgmt_connected).toBe(true);
    return d;
  };
  const disconnects = async (deviceId: string, project = projectId) => {
    for (let i = 0; i < 100; i++) {
      const found = (await service.stores.events.readStream(deviceStream(project, deviceId))).filter((e) => e.type === 'DeviceDisconnected').map((e) => (e.data as { reason: string }).reason);
      if (found.length > 0) return found;
      await sleep(50);
    }
    return [];
  };
  const sample = (deviceId: string) => call(service, 'POST', `/api/${projectId}/device/${deviceId}/start-sampling`, { headers: ada, body: { label: 'x', lengthMs: 1000, category: 'training', intervalMs: 1, sensor: 'Camera (640x480)' } });

  if (cases === 'events') it('a revoked key: closed with the reason, recorded access-ended, sampled no more, and its hello refused', async () => {
    const key = await addKey();
    const d = await connected(key.apiKey, 'revoked-1');
    expect((await call(service, 'DELETE', `/api/${projectId}/apikeys/${key.id}`, { headers: ada })).status).toBe(200);
    expect(await d.closed).toEqual({ code: 1008, reason: KEY_ENDED });
    expect(await disconnects('revoked-1')).toEqual(['access-ended']);
    await readModelsCaughtUp(service);
    expect((await sample('revoked-1')).status).toBe(409);
    // The library says hello again a second later: refused for good.
    const again = await connectDevice(service.remoteMgmtUrl!);
    open.push(again);
    again.send(linuxHello(key.apiKey, 'revoked-1'));
    expect(await again.next()).toMatchObject({ hello: false, auth: false });
  });

  if (cases === 'expiry') it('an expired key: found by the periodic check', async () => {
    const key = await addKey({ ttl: 2 });
    const d = await connected(key.apiKey, 'expiring-1');
    const ended = await Promise.race([d.closed, sleep(10_000).then(() => undefined)]);
    expect(ended).toEqual({ code: 1008, reason: KEY_ENDED });
    expect(await disconnects('expiring-1')).toEqual(['access-ended']);
  });

  if (cases === 'events') it('a deleted device: closed, so that its next hello lists it again', async () => {
    const key = await addKey();
    const d = await connected(key.apiKey, 'deleted-1');
    expect((await call(service, 'DELETE', `/api/${projectId}/device/deleted-1`, { headers: ada })).status).toBe(200);
    const ended = await d.closed;
    expect(ended.code).toBe(1008);
    expect(ended.reason).toMatch(/deleted/);
    await connected(key.apiKey, 'deleted-1');
  });

  if (cases === 'events') it('a deleted project: closed', async () => {
    const other = await call(service, 'POST', '/api/projects/create', { headers: ada, body: { projectName: 'Doomed' } });
    const doomed = other.body.id as number;
    const key = await call(service, 'POST', `/api/${doomed}/apikeys`, { headers: ada, body: { name: 'device', role: 'ingestion_deployment' } });
    const d = await connected(key.body.apiKey as string, 'doomed-1', doomed);
    expect((await call(service, 'DELETE', `/api/${doomed}`, { headers: ada })).status).toBe(200);
    const ended = await d.closed;
    expect(ended).toEqual({ code: 1008, reason: `Project ${doomed} was deleted` });
    expect(await disconnects('doomed-1', doomed)).toEqual(['access-ended']);
  });
});

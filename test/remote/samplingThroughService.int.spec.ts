// startSampling from the HTTP call to the follower, in one service: the route appends the request,
// the relay (with a fake socket registry in place of the remote server) sends it with the project's
// real HMAC key, the device's messages become events, and the project's job socket hears them.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDevice } from '../../commands/devices/deviceCommands';
import { systemContext } from '../../commands/commandContext';
import { IdAllocator } from '../../commands/idAllocator';
import { parseDeviceMessage } from '../../domain/device/remoteMessages';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import type { HeldDevice } from '../../remote/remoteSocket';
import { startSamplingRelay, type SamplingRelay } from '../../remote/samplingRelay';
import { SdkSocket } from '../api/socketClient';
import { readModelsCaughtUp } from '../support/readModels';
import { call, registerUser, startTestService, type TestService } from '../support/testService';

describe('a sampling request through the service', () => {
  let service: TestService;
  let relay: SamplingRelay;
  let ada: { id: number; token: string };
  let projectId: number;
  let hmacKey: string;
  const held = new Map<string, HeldDevice>();
  const frames: string[] = [];
  const open: SdkSocket[] = [];
  const jwt = () => ({ 'x-jwt-token': ada.token });

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    await registerUser(service, 'staffer');
    ada = await registerUser(service, 'ada');
    projectId = Number((await call(service, 'POST', '/api/projects/create', { headers: jwt(), body: { projectName: 'Cams' } })).body.id);
    hmacKey = String((await call(service, 'GET', `/api/${projectId}/devkeys`, { headers: jwt() })).body.hmacKey);
    relay = await startSamplingRelay({
      events: service.stores.events,
      projects: new ProjectQueries(service.stores.readStore),
      registry: { connection: (id) => held.get(id) },
      log: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await relay?.stop();
    await service?.destroy();
  });

  it('sends the request with the HMAC key, and the follower hears the device to the end', async () => {
    const events = service.stores.events;
    const device: HeldDevice = { projectId, deviceId: 'ac:87:a3', connectionId: 'p1-c1', socket: { send: (f) => (frames.push(f), true) } };
    await connectDevice(
      { events, ids: new IdAllocator(events), devices: { byId: async () => null } },
      { projectId, deviceId: device.deviceId, deviceType: 'EDGE_IMPULSE_LINUX', connectionId: device.connectionId, host: '10.0.0.7', mode: 'ingestion', sensors: [{ name: 'Camera (640x480)', maxSampleLengthS: 60000, frequencies: [] }], supportsSnapshotStreaming: true },
      systemContext('test'),
    );
    held.set(device.connectionId, device);
    await readModelsCaughtUp(service);
    const token = (await call(service, 'GET', `/api/${projectId}/socket-token`, { headers: jwt() })).body.token as { socketToken: string };
    const follower = await SdkSocket.greeted(service.apiUrl, token.socketToken, open);

    const res = await call(service, 'POST', `/api/${projectId}/device/${encodeURIComponent(device.deviceId)}/start-sampling`, {
      headers: jwt(),
      body: { label: 'cat', lengthMs: 10_000, category: 'training', intervalMs: 0, sensor: 'Camera (640x480)' },
    });
    // intervalMs 0 is below the sample rules' minimum.
    expect(res.status).toBe(400);
    const ok = await call(service, 'POST', `/api/${projectId}/device/${encodeURIComponent(device.deviceId)}/start-sampling`, {
      headers: jwt(),
      body: { label: 'cat', lengthMs: 10_000, category: 'training', intervalMs: 100, sensor: 'Camera (640x480)' },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const id = Number(ok.body.id);
    await follower.until(() => follower.named('sampling-progress').length === 1, 'the request');
    for (let i = 0; i < 200 && frames.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(JSON.parse(frames[0]!)).toEqual({ sample: { label: 'cat', length: 10_000, path: '/api/training/data', hmacKey, interval: 100, sensor: 'Camera (640x480)' } });

    // The device's frames as the library sends them, through the parser the remote server uses.
    const device_says = (frame: object) => {
      const parsed = parseDeviceMessage(JSON.stringify(frame));
      if (!parsed.ok || parsed.value.kind === 'hello') throw new Error(`unexpected frame ${JSON.stringify(frame)}`);
      relay.onDeviceMessage(device, parsed.value);
    };
    device_says({ sampleStarted: true });
    device_says({ sample: true });
    for (let p = 0; p <= 100; p += 5) device_says({ sampleReading: true, progressPercentage: p });
    device_says({ sampleUploading: true });
    device_says({ sample: false, error: 'Failed to upload:\n<html>\n502 Bad Gateway\n</html>' });
    await follower.until(() => follower.named('sampling-progress').some((m) => m.payload.stage === 'failed'), 'the failure');
    const stages = follower.named('sampling-progress').map((m) => m.payload);
    expect(stages.every((m) => m.id === id && m.deviceId === device.deviceId)).toBe(true);
    expect(stages.map((m) => m.stage)).toEqual(['requested', 'started', 'accepted', ...Array(11).fill('reading'), 'uploading', 'failed']);
    expect(stages.at(-1)).toMatchObject({ error: 'Failed to upload: <html> 502 Bad Gateway </html>' });

    const all: string[] = [];
    // The key is in the log once, where it was added (HmacKeyAdded); nothing of sampling carries it.
    for await (const e of events.readAll()) if (e.type !== 'HmacKeyAdded') all.push(JSON.stringify({ type: e.type, data: e.data, metadata: e.metadata }));
    expect(all.some((e) => e.includes('DeviceSamplingRequested'))).toBe(true);
    expect(all.join('\n')).not.toContain(hmacKey);
    // The device may be asked again at once.
    const again = await call(service, 'POST', `/api/${projectId}/device/${encodeURIComponent(device.deviceId)}/start-sampling`, {
      headers: jwt(),
      body: { label: 'dog', lengthMs: 1000, category: 'testing', intervalMs: 100 },
    });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
  });
});

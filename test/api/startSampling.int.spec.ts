// POST /api/{projectId}/device/{deviceId}/start-sampling (sdk-reference 2.9 startSampling): the
// device's connection is simulated by its DeviceConnected event, as the `remote` role appends it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deviceStream } from '../../domain/device/deviceEvents';
import { adaAndBob, call, describeOn, setups, startTestService, type TestService } from '../support/testService';
import { readModelsCaughtUp } from '../support/readModels';

const camera = { name: 'Camera (640x480)', maxSampleLengthS: 60000, frequencies: [] };
const microphone = { name: 'Microphone', maxSampleLengthS: 3600, frequencies: [16000] };

for (const setup of setups) {
  describeOn(setup, 'startSampling over HTTP', () => {
    let service: TestService;
    let ada: string;
    let bob: string;
    let projectId: number;
    let apiKey: string;
    const jwt = (token: string) => ({ 'x-jwt-token': token });
    const start = (deviceId: string, body: Record<string, unknown>, headers: Record<string, string> = jwt(ada)) =>
      call(service, 'POST', `/api/${projectId}/device/${encodeURIComponent(deviceId)}/start-sampling`, { headers, body });
    const good = { label: 'cat', lengthMs: 1000, category: 'training', intervalMs: 1, sensor: 'Camera (640x480)' };
    const head = () => service.stores.events.headPosition();
    let connections = 0;
    const connect = async (deviceId: string, sensors = [camera, microphone]) => {
      const connectionId = `test-${++connections}`;
      await service.stores.events.appendToStream(
        deviceStream(projectId, deviceId),
        [
          {
            id: crypto.randomUUID(),
            type: 'DeviceConnected',
            data: { projectId, deviceId, id: 90_000 + connections, deviceType: 'EDGE_IMPULSE_LINUX', connectionId, host: '10.0.0.7', mode: 'ingestion', sensors, supportsSnapshotStreaming: true, connected: new Date().toISOString() },
            metadata: { actor: 'system:test', correlationId: 'c', time: new Date().toISOString() },
          },
        ],
        'any',
      );
      await readModelsCaughtUp(service);
      return connectionId;
    };
    const disconnect = async (deviceId: string, connectionId: string) => {
      await service.stores.events.appendToStream(
        deviceStream(projectId, deviceId),
        [
          {
            id: crypto.randomUUID(),
            type: 'DeviceDisconnected',
            data: { projectId, deviceId, connectionId, reason: 'closed', disconnected: new Date().toISOString() },
            metadata: { actor: 'system:test', correlationId: 'c', time: new Date().toISOString() },
          },
        ],
        'any',
      );
      await readModelsCaughtUp(service);
    };
    /** The request is refused with `status` and a message matching `error`, and the log did not move. */
    const refused = async (deviceId: string, body: Record<string, unknown>, status: number, error: RegExp, headers?: Record<string, string>) => {
      const before = await head();
      const res = await start(deviceId, body, headers);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.success).toBe(false);
      expect(String(res.body.error)).toMatch(error);
      expect(await head()).toEqual(before);
    };

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      ({ ada, bob } = await adaAndBob(service));
      const project = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada), body: { projectName: 'Sampling' } });
      projectId = Number(project.body.id);
      apiKey = String(project.body.apiKey);
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('refuses an unknown device with 404, a known but unconnected one with 409, appending nothing', async () => {
      await refused('nobody', good, 404, /Device "nobody" not found/);
      expect((await call(service, 'POST', `/api/${projectId}/devices/create`, { headers: jwt(ada), body: { deviceId: 'idle', deviceType: 'LINUX', ifNotExists: false } })).status).toBe(200);
      await readModelsCaughtUp(service);
      await refused('idle', good, 409, /Device "idle" is not connected/);
    });

    it('refuses bad requests with a clear 400, appending nothing', async () => {
      await connect('cam');
      await refused('cam', { ...good, sensor: 'Accelerometer' }, 400, /no sensor "Accelerometer"; it has "Camera \(640x480\)", "Microphone"/);
      await refused('cam', { ...good, category: 'validation' }, 400, /"category": the device library uploads to training or testing only/);
      await refused('cam', { ...good, category: 'post-processing' }, 400, /training or testing only/);
      await refused('cam', { ...good, category: 'anomaly' }, 400, /"category"/);
      await refused('cam', { ...good, lengthMs: 0 }, 400, /"lengthMs"/);
      await refused('cam', { ...good, lengthMs: 'long' }, 400, /"lengthMs"/);
      await refused('cam', { ...good, sensor: 'Microphone', lengthMs: 3_600_001 }, 400, /Length \("lengthMs"\) must be from 1 to 3600000/);
      await refused('cam', { ...good, intervalMs: 0 }, 400, /"intervalMs"/);
      await refused('cam', { ...good, intervalMs: 86_400_001 }, 400, /"intervalMs"/);
      await refused('cam', { ...good, label: '' }, 400, /"label"/);
      await refused('cam', { ...good, label: ' ' }, 400, /Label \("label"\) is empty/);
      await refused('cam', { ...good, label: 'a\u202eb' }, 400, /"label"/);
      await refused('cam', { ...good, label: 'l'.repeat(257) }, 400, /"label"/);
      await refused('cam', { ...good, collectedSampleCount: -1 }, 400, /"collectedSampleCount"/);
      const { label: _label, ...noLabel } = good;
      await refused('cam', noLabel, 400, /"label" is required/);
    });

    it('refuses callers without device access to the project, appending nothing', async () => {
      await refused('cam', good, 403, /not a collaborator/, jwt(bob));
      await refused('cam', good, 401, /Authentication required/, {});
      const readonlyKey = await call(service, 'POST', `/api/${projectId}/apikeys`, { headers: jwt(ada), body: { name: 'ro', role: 'readonly', isDevelopmentKey: false } });
      expect(readonlyKey.status).toBe(200);
      await refused('cam', good, 403, /role "readonly" cannot register devices/, { 'x-api-key': String(readonlyKey.body.apiKey) });
    });

    it('answers the request id and appends the request for the current connection; a second one waits for the first', async () => {
      const connectionId = await connect('cam2');
      const res = await start('cam2', { ...good, labelColor: '#e6194b', collectedSampleCount: 3, targetSampleCount: 10 }, { 'x-api-key': apiKey });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ success: true, id: expect.any(Number) });
      const stream = await service.stores.events.readStream(deviceStream(projectId, 'cam2'));
      expect(stream.at(-1)).toMatchObject({
        type: 'DeviceSamplingRequested',
        data: { projectId, deviceId: 'cam2', requestId: res.body.id, connectionId, label: 'cat', lengthMs: 1000, category: 'training', intervalMs: 1, sensor: 'Camera (640x480)' },
      });
      await refused('cam2', good, 409, /still sampling \(request \d+\)/);
      // A socket that ends ends its request: the device may be asked again once it is back.
      await disconnect('cam2', connectionId);
      await refused('cam2', good, 409, /not connected/);
      await connect('cam2');
      const again = await start('cam2', { ...good, category: 'testing', sensor: undefined });
      expect(again.status).toBe(200);
      expect(again.body.id).not.toBe(res.body.id);
    });
  });
}

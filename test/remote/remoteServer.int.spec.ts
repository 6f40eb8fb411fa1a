// The remote-management server in the running service: hellos of every version, refusals that
// record nothing, bad input, replacement, and the ends of a connection (cut, silent, stopped).
import { EdgeImpulseApi } from 'edge-impulse-api';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectDevice, linuxHello, type TestDevice } from '../support/remoteDevice';
import { readModelsCaughtUp } from '../support/readModels';
import { adaWithProject, call, describeOn, setups, startTestService, type TestService } from '../support/testService';
import { deviceStream } from '../../domain/device/deviceEvents';
import { REMOTE_FRAME_MAX_BYTES } from '../../domain/device/remoteMessages';

// Short enough for a test, long enough for a loaded machine.
const LIMITS = { helloTimeoutMs: 1500, pingIntervalMs: 200, silenceTimeoutMs: 1500, sweepIntervalMs: 100, maxInvalidFrames: 5 };

for (const setup of setups) {
  describeOn(setup, 'the remote-management server', () => {
    let service: TestService;
    let ada: Record<string, string>;
    let projectId: number;
    let apiKey: string;
    const open: TestDevice[] = [];

    const device = async (options: { autoPong?: boolean } = {}) => {
      const d = await connectDevice(service.remoteMgmtUrl!, options);
      open.push(d);
      return d;
    };
    const hello = async (frame: unknown, options: { autoPong?: boolean } = {}) => {
      const d = await device(options);
      d.send(frame);
      return { d, reply: await d.next() };
    };
    const listed = async (deviceId: string) => {
      await readModelsCaughtUp(service);
      const res = await call(service, 'GET', `/api/${projectId}/devices`, { headers: ada });
      expect(res.status).toBe(200);
      return (res.body.devices as Record<string, unknown>[]).find((x) => x.deviceId === deviceId);
    };
    const history = async (deviceId: string) => (await service.stores.events.readStream(deviceStream(projectId, deviceId))).map((e) => ({ type: e.type, data: e.data as Record<string, unknown> }));
    const head = () => service.stores.events.headPosition();
    /** Waits for the device's stream to hold `count` events of `type`. */
    const eventually = async (deviceId: string, type: string, count = 1) => {
      for (let i = 0; i < 200; i++) {
        const events = (await history(deviceId)).filter((e) => e.type === type);
        if (events.length >= count) return events;
        await sleep(50);
      }
      throw new Error(`no ${count} ${type} on device ${deviceId}`);
    };

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo, remoteLimits: LIMITS });
      ({ ada, projectId, apiKey } = await adaWithProject(service, 'Remote devices'));
    });
    afterAll(async () => {
      for (const d of open) d.ws.terminate();
      await service?.destroy();
    });

    it('connects a version 4 device in ingestion mode: hello true, listed connected with its sensors and host', async () => {
      const { reply } = await hello(linuxHello(apiKey, 'dev-v4'));
      expect(reply).toMatchObject({ hello: true });
      expect(typeof reply.serverTimestamp).toBe('number');
      expect(await listed('dev-v4')).toMatchObject({
        deviceId: 'dev-v4',
        deviceType: 'LINUX_X86',
        remote_mgmt_connected: true,
        remote_mgmt_host: '127.0.0.1',
        remoteMgmtMode: 'ingestion',
        supportsSnapshotStreaming: true,
        sensors: [
          { name: 'Microphone', maxSampleLengthS: 3600, frequencies: [16000] },
          { name: 'Camera (640x480)', maxSampleLengthS: 60000, frequencies: [] },
        ],
      });
      const events = await history('dev-v4');
      expect(events.map((e) => e.type)).toEqual(['DeviceConnected']);
      expect(String(events[0]!.data.connectionId)).toMatch(/^[A-Za-z0-9._-]+-[0-9a-f]{16}$/);
      expect(JSON.stringify(events)).not.toContain(apiKey);
      expect(service.remote?.registry?.device(projectId, 'dev-v4')).toBeDefined();
    });

    it('connects a version 1 device whose sensors are names only', async () => {
      const { reply } = await hello({ hello: { version: 1, apiKey, deviceId: 'dev-v1', deviceType: 'MCU', sensors: ['accX', 'accY'] } });
      expect(reply).toMatchObject({ hello: true });
      expect(await listed('dev-v1')).toMatchObject({
        remote_mgmt_connected: true,
        remoteMgmtMode: 'ingestion',
        sensors: [
          { name: 'accX', maxSampleLengthS: 0, frequencies: [] },
          { name: 'accY', maxSampleLengthS: 0, frequencies: [] },
        ],
      });
    });

    it('connects version 2 and 3 devices, in ingestion mode', async () => {
      for (const version of [2, 3]) {
        const deviceId = `dev-v${version}`;
        const { reply } = await hello({ hello: { version, apiKey, deviceId, deviceType: 'MCU', sensors: [{ name: 'Built-in accelerometer', maxSampleLengthS: 300, frequencies: [62.5, 100] }] } });
        expect(reply).toMatchObject({ hello: true });
        expect(await listed(deviceId)).toMatchObject({ remote_mgmt_connected: true, remoteMgmtMode: 'ingestion', sensors: [{ name: 'Built-in accelerometer', maxSampleLengthS: 300, frequencies: [62.5, 100] }] });
      }
    });

    it('connects a version 4 device in inference mode, listed with its inference info over HTTP and through the official SDK', async () => {
      const inferenceInfo = { projectId, projectOwner: 'Ada', projectName: 'Remote devices', deploymentVersion: 3, modelType: 'object_detection' };
      const { reply } = await hello(linuxHello(apiKey, 'dev-runner', { mode: 'inference', inferenceInfo }));
      expect(reply).toMatchObject({ hello: true });
      const expected = { projectId, projectOwner: 'Ada', projectName: 'Remote devices', deployedVersion: 3, modelType: 'objectDetection' };
      expect(await listed('dev-runner')).toMatchObject({ remote_mgmt_connected: true, remoteMgmtMode: 'inference', inferenceInfo: expected });
      const api = new EdgeImpulseApi({ endpoint: service.apiUrl });
      await api.authenticate({ method: 'apiKey', apiKey });
      const sdkListed = (await api.devices.listDevices(projectId)).devices.find((x) => x.deviceId === 'dev-runner');
      expect(sdkListed).toMatchObject({ remote_mgmt_connected: true, remoteMgmtMode: 'inference', inferenceInfo: expected });
      expect((await api.devices.getDevice(projectId, 'dev-runner')).device).toMatchObject({ remoteMgmtMode: 'inference' });
    });

    it('refuses a bad API key and a readonly one with hello false and auth false, recording nothing', async () => {
      const readonly = await call(service, 'POST', `/api/${projectId}/apikeys`, { headers: ada, body: { name: 'viewer', role: 'readonly', isDevelopmentKey: false } });
      expect(readonly.status).toBe(200);
      await readModelsCaughtUp(service);
      const before = await head();
      for (const [key, reason] of [
        ['ei_0000000000000000000000000000000000000000000000000000000000000000', /Invalid API key/],
        [String(readonly.body.apiKey), /role "readonly" cannot connect a device/],
      ] as const) {
        const { d, reply } = await hello(linuxHello(key, 'dev-refused'));
        expect(reply).toMatchObject({ hello: false, auth: false });
        expect(String(reply.err)).toMatch(reason);
        expect((await d.closed).code).toBe(1008);
      }
      expect(await head()).toBe(before);
      expect(await history('dev-refused')).toEqual([]);
      expect(await listed('dev-refused')).toBeUndefined();
    });

    it('answers bad first frames with hello false and a reason, recording nothing', async () => {
      const before = await head();
      const cases: [unknown, RegExp][] = [
        ['not json', /not JSON/],
        [{ sampleStarted: true }, /first message must be a hello/],
        [{ hello: { version: 4, deviceId: 'x', deviceType: 'LINUX' } }, /apiKey/],
        [{ hello: { version: 9, apiKey, deviceId: 'x', deviceType: 'LINUX' } }, /Invalid hello/],
        [linuxHello(apiKey, 'dev-absurd', { sensors: [{ name: 'Fast', maxSampleLengthS: 10, frequencies: [1e12] }] }), /frequencies/],
        [linuxHello(apiKey, 'dev-absurd', { sensors: [{ name: 'bell\u0007', maxSampleLengthS: 10, frequencies: [100] }] }), /Sensor name/],
        [linuxHello(apiKey, 'dev-absurd', { sensors: Array.from({ length: 65 }, (_, i) => ({ name: `s${i}`, maxSampleLengthS: 1, frequencies: [1] })) }), /sensors/],
        [linuxHello(apiKey, 'dev-absurd', { deviceType: 'x'.repeat(20_000) }), /Hello is \d+ bytes/],
        [linuxHello(apiKey, 'dev-absurd', { mode: 'inference' }), /inferenceInfo/],
      ];
      for (const [frame, reason] of cases) {
        const { d, reply } = await hello(frame);
        expect(reply).toMatchObject({ hello: false });
        expect(String(reply.err)).toMatch(reason);
        expect((await d.closed).code).toBe(1008);
      }
      expect(await head()).toBe(before);
      expect(await history('dev-absurd')).toEqual([]);
    });

    it('closes a socket that says no hello in time, and one whose frame is over the size limit', async () => {
      const before = await head();
      const quiet = await device();
      expect((await quiet.closed).code).toBe(1008);
      const big = await device();
      big.send('x'.repeat(REMOTE_FRAME_MAX_BYTES + 1));
      expect((await big.closed).code).toBe(1009);
      expect(await head()).toBe(before);
    });

    it('drops invalid frames after the hello, closes a socket that sends too many of them, and records it disconnected', async () => {
      const { d, reply } = await hello(linuxHello(apiKey, 'dev-garbage'));
      expect(reply).toMatchObject({ hello: true });
      for (let i = 0; i < 3; i++) d.send({ whatever: i });
      d.send({ sampleReading: true, progressPercentage: 400 });
      // Still served: a bad frame is dropped, not fatal.
      expect(d.ws.readyState).toBe(d.ws.OPEN);
      for (let i = 0; i < 5; i++) d.send('garbage');
      expect((await d.closed).code).toBe(1008);
      expect((await eventually('dev-garbage', 'DeviceDisconnected'))[0]!.data).toMatchObject({ reason: 'closed' });
      expect(await listed('dev-garbage')).toMatchObject({ remote_mgmt_connected: false, remoteMgmtMode: 'disconnected' });
    });

    it('closes a socket that floods frames with 1008, and keeps serving others', async () => {
      const other = await hello(linuxHello(apiKey, 'dev-bystander'));
      expect(other.reply).toMatchObject({ hello: true });
      const { d, reply } = await hello(linuxHello(apiKey, 'dev-flood'));
      expect(reply).toMatchObject({ hello: true });
      for (let i = 0; i < 300; i++) d.send({ sampleStarted: true });
      expect((await d.closed).code).toBe(1008);
      await eventually('dev-flood', 'DeviceDisconnected');
      expect(other.d.ws.readyState).toBe(other.d.ws.OPEN);
      expect(await listed('dev-bystander')).toMatchObject({ remote_mgmt_connected: true });
    });

    it('lets a second connection of the same device replace the first: the first is closed, the device stays connected', async () => {
      const first = await hello(linuxHello(apiKey, 'dev-twice'));
      expect(first.reply).toMatchObject({ hello: true });
      const second = await hello(linuxHello(apiKey, 'dev-twice', { sensors: [{ name: 'Microphone', maxSampleLengthS: 60, frequencies: [16000] }] }));
      expect(second.reply).toMatchObject({ hello: true });
      expect((await first.d.closed).code).toBe(1000);
      const connected = await eventually('dev-twice', 'DeviceConnected', 2);
      expect(service.remote?.registry?.device(projectId, 'dev-twice')?.connectionId).toBe(connected[1]!.data.connectionId);
      // The first socket's end is no disconnect: the newer connection is the device's.
      await sleep(200);
      expect((await history('dev-twice')).map((e) => e.type)).toEqual(['DeviceConnected', 'DeviceConnected']);
      expect(await listed('dev-twice')).toMatchObject({ remote_mgmt_connected: true, sensors: [{ name: 'Microphone', maxSampleLengthS: 60, frequencies: [16000] }] });
      second.d.ws.close();
      expect((await eventually('dev-twice', 'DeviceDisconnected'))[0]!.data).toMatchObject({ connectionId: connected[1]!.data.connectionId, reason: 'closed' });
    });

    it('records a cut connection disconnected, and the device that comes back is the same device', async () => {
      const { d, reply } = await hello(linuxHello(apiKey, 'dev-cut'));
      expect(reply).toMatchObject({ hello: true });
      const { id } = (await listed('dev-cut'))!;
      d.ws.terminate();
      expect((await eventually('dev-cut', 'DeviceDisconnected'))[0]!.data).toMatchObject({ reason: 'closed' });
      expect(await listed('dev-cut')).toMatchObject({ remote_mgmt_connected: false, remoteMgmtMode: 'disconnected' });
      expect((await hello(linuxHello(apiKey, 'dev-cut'))).reply).toMatchObject({ hello: true });
      expect(await listed('dev-cut')).toMatchObject({ id, remote_mgmt_connected: true });
      expect((await history('dev-cut')).map((e) => e.type)).toEqual(['DeviceConnected', 'DeviceDisconnected', 'DeviceConnected']);
    });

    it('terminates a silent connection (no frame, no pong) and records it disconnected for a timeout', async () => {
      const { d, reply } = await hello(linuxHello(apiKey, 'dev-silent'), { autoPong: false });
      expect(reply).toMatchObject({ hello: true });
      await d.closed;
      expect((await eventually('dev-silent', 'DeviceDisconnected'))[0]!.data).toMatchObject({ reason: 'timeout' });
      expect(await listed('dev-silent')).toMatchObject({ remote_mgmt_connected: false });
    });

    it('keeps a device that answers pings connected past the silence limit', async () => {
      const { d, reply } = await hello(linuxHello(apiKey, 'dev-alive'));
      expect(reply).toMatchObject({ hello: true });
      await sleep(LIMITS.silenceTimeoutMs * 2);
      expect(d.ws.readyState).toBe(d.ws.OPEN);
      expect((await history('dev-alive')).map((e) => e.type)).toEqual(['DeviceConnected']);
    });

    it("reads a device's connection history from its stream: connected with sensors, disconnected with a reason", async () => {
      const events = await history('dev-cut');
      expect(events[0]).toMatchObject({ type: 'DeviceConnected', data: { projectId, deviceId: 'dev-cut', host: '127.0.0.1', mode: 'ingestion', sensors: [{ name: 'Microphone' }, { name: 'Camera (640x480)' }] } });
      expect(events[1]).toMatchObject({ type: 'DeviceDisconnected', data: { projectId, deviceId: 'dev-cut', connectionId: events[0]!.data.connectionId, reason: 'closed' } });
    });
  });
}

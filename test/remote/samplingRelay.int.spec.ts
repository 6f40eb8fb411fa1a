// The sampling relay with a fake socket registry and a real (in-memory SQLite) log: requests are
// appended as the route appends them, device messages are handed to it as the remote server will.
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectDevice, disconnectDevice, requestSampling } from '../../commands/devices/deviceCommands';
import { IdAllocator } from '../../commands/idAllocator';
import { systemContext } from '../../commands/commandContext';
import { deviceStream, type DeviceEvent } from '../../domain/device/deviceEvents';
import type { DeviceMessage } from '../../domain/device/remoteMessages';
import { startSamplingRelay, type SamplingRelay } from '../../remote/samplingRelay';
import type { HeldDevice } from '../../remote/remoteSocket';
import type { HmacKeyEntry } from '../../projections/projects/projectDocument';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';

const HMAC_KEY = 'hmac-4f1e9a0c7d2b';
const projectId = 5;
const camera = { name: 'Camera (640x480)', maxSampleLengthS: 60000, frequencies: [] };
type Sent = Exclude<DeviceMessage, { kind: 'hello' }>;

class FakeSocket {
  readonly frames: string[] = [];
  open = true;
  send(frame: string): boolean {
    if (!this.open) return false;
    this.frames.push(frame);
    return true;
  }
}

async function until(done: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the sampling relay', () => {
  let events: SqliteEventStore;
  let relay: SamplingRelay;
  const held = new Map<string, HeldDevice>();
  let hmacKeys: Record<string, HmacKeyEntry>;
  const key = (id: number, hmacKey: string, revoked = false): HmacKeyEntry => ({ id, name: `k${id}`, hmacKey, isDevelopmentKey: false, created: '2026-11-28T10:00:00.000Z', createdByUserId: null, revoked });
  let connections = 0;
  let projectsDown = false;
  const deps = () => ({ events, ids: new IdAllocator(events), devices: { byId: async () => null } });
  const ctx = () => systemContext('test');

  /** A device connected to this process: its event appended, its socket in the registry. */
  const connect = async (deviceId: string): Promise<HeldDevice & { socket: FakeSocket }> => {
    const connectionId = `p1-c${++connections}`;
    await connectDevice(deps(), { projectId, deviceId, deviceType: 'EDGE_IMPULSE_LINUX', connectionId, host: '10.0.0.7', mode: 'ingestion', sensors: [camera], supportsSnapshotStreaming: true }, ctx());
    const device = { projectId, deviceId, connectionId, socket: new FakeSocket() };
    held.set(connectionId, device);
    return device;
  };
  const ask = (deviceId: string) => requestSampling(deps(), { projectId, deviceId, label: 'cat', lengthMs: 2000, category: 'testing', intervalMs: 1, sensor: camera.name }, ctx());
  const progress = async (deviceId: string) =>
    ((await events.readStream(deviceStream(projectId, deviceId))) as unknown as DeviceEvent[]).filter((e) => e.type === 'DeviceSamplingProgressed').map((e) => e.data as Record<string, unknown>);
  const say = (device: HeldDevice, ...messages: Sent[]) => {
    for (const m of messages) relay.onDeviceMessage(device, m);
  };

  beforeEach(async () => {
    events = SqliteEventStore.open(':memory:');
    held.clear();
    projectsDown = false;
    hmacKeys = { '2': key(2, HMAC_KEY), '1': key(1, 'revoked-key', true) };
    relay = await startSamplingRelay({
      events,
      projects: {
        byId: async (id) => {
          if (projectsDown) throw new Error('read store down');
          return id === projectId ? { hmacKeys } : null;
        },
      },
      registry: { connection: (id) => held.get(id) },
      log: pino({ level: 'silent' }),
    });
  });
  afterEach(async () => {
    await relay.stop();
    await events.close();
  });

  it('sends the request to the socket it holds, with the project HMAC key, which no event carries', async () => {
    const device = await connect('cam');
    const { requestId } = await ask('cam');
    await until(() => device.socket.frames.length === 1, 'the sample request');
    expect(JSON.parse(device.socket.frames[0]!)).toEqual({ sample: { label: 'cat', length: 2000, path: '/api/testing/data', hmacKey: HMAC_KEY, interval: 1, sensor: camera.name } });
    say(device, { kind: 'sampleAccepted' }, { kind: 'sampleFinished' });
    await until(async () => (await progress('cam')).length === 2, 'the progress events');
    expect((await progress('cam')).map((p) => [p.requestId, p.stage])).toEqual([
      [requestId, 'accepted'],
      [requestId, 'finished'],
    ]);
    const all: string[] = [];
    for await (const e of events.readAll()) all.push(JSON.stringify({ streamId: e.streamId, type: e.type, data: e.data, metadata: e.metadata }));
    expect(all.length).toBeGreaterThan(3);
    expect(all.join('\n')).not.toContain(HMAC_KEY);
  });

  it('turns the device messages into progress events, readings at 10 % steps, each stage once', async () => {
    const device = await connect('cam');
    const { requestId } = await ask('cam');
    await until(() => device.socket.frames.length === 1, 'the sample request');
    say(device, { kind: 'sampleAccepted' }, { kind: 'sampleStarted' }, { kind: 'sampleStarted' });
    // One reading per frame read, as the device library sends them.
    for (let p = 0; p <= 100; p += 0.5) say(device, { kind: 'sampleReading', progressPercentage: p });
    say(device, { kind: 'sampleUploading' }, { kind: 'sampleProcessing' }, { kind: 'snapshotStarted' }, { kind: 'sampleFinished' });
    // After the end, the device's chatter is nobody's.
    say(device, { kind: 'sampleUploading' }, { kind: 'sampleFailed', error: 'late' });
    await until(async () => (await progress('cam')).some((p) => p.stage === 'finished'), 'the end');
    await relay.stop();
    const got = await progress('cam');
    expect(got.every((p) => p.requestId === requestId && p.connectionId === device.connectionId)).toBe(true);
    expect(got.map((p) => (p.stage === 'reading' ? `reading ${String(p.progressPercentage)}` : p.stage))).toEqual([
      'accepted',
      'started',
      ...[0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100].map((p) => `reading ${p}`),
      'uploading',
      'processing',
      'finished',
    ]);
  });

  it("passes the device's error on and ends the request, so the device may be asked again", async () => {
    const device = await connect('cam');
    await ask('cam');
    await until(() => device.socket.frames.length === 1, 'the sample request');
    say(device, { kind: 'sampleFailed', error: 'Failed to capture image' });
    await until(async () => (await progress('cam')).length === 1, 'the failure');
    expect((await progress('cam'))[0]).toMatchObject({ stage: 'failed', error: 'Failed to capture image' });
    await ask('cam');
    await until(() => device.socket.frames.length === 2, 'the second request');
  });

  it('ends the request with an error when the connection ends, recorded or not', async () => {
    const device = await connect('cam');
    const { requestId } = await ask('cam');
    await until(() => device.socket.frames.length === 1, 'the sample request');
    say(device, { kind: 'sampleStarted' });
    // The server lost its append of the disconnect: the relay still ends the request.
    held.delete(device.connectionId);
    relay.onConnectionEnded(device);
    await until(async () => (await progress('cam')).some((p) => p.stage === 'failed'), 'the failure');
    expect((await progress('cam')).at(-1)).toMatchObject({ requestId, stage: 'failed', error: 'The device disconnected while sampling' });

    // Recorded: the disconnect itself ends the request, and the relay's report adds nothing.
    const again = await connect('cam');
    const second = await ask('cam');
    await until(() => again.socket.frames.length === 1, 'the second request');
    await disconnectDevice(deps(), { projectId, deviceId: 'cam', connectionId: again.connectionId, reason: 'timeout' }, ctx());
    relay.onConnectionEnded(again);
    say(again, { kind: 'sampleFinished' });
    await relay.stop();
    const ended = (await progress('cam')).filter((p) => p.requestId === second.requestId);
    expect(ended).toEqual([expect.objectContaining({ stage: 'failed', error: 'The device disconnected while sampling (timeout)' })]);
  });

  it('ends the request with an error when the project has no HMAC key or the socket closed first', async () => {
    hmacKeys = { '1': key(1, 'revoked-key', true) };
    const device = await connect('cam');
    await ask('cam');
    await until(async () => (await progress('cam')).length === 1, 'the failure');
    expect(device.socket.frames).toEqual([]);
    expect((await progress('cam'))[0]).toMatchObject({ stage: 'failed', error: expect.stringMatching(/no HMAC key/) });

    hmacKeys = { '2': key(2, HMAC_KEY) };
    device.socket.open = false;
    await ask('cam');
    await until(async () => (await progress('cam')).length === 2, 'the second failure');
    expect((await progress('cam'))[1]).toMatchObject({ stage: 'failed', error: 'The device disconnected before the request reached it' });
  });

  it('ends the request with an error when the project cannot be read, and keeps serving', async () => {
    projectsDown = true;
    const device = await connect('cam');
    await ask('cam');
    await until(async () => (await progress('cam')).length === 1, 'the failure');
    expect((await progress('cam'))[0]).toMatchObject({ stage: 'failed', error: expect.stringMatching(/could not read the project/) });
    projectsDown = false;
    await ask('cam');
    await until(() => device.socket.frames.length === 1, 'the next request');
  });

  it('leaves requests for sockets it does not hold to the process that holds them', async () => {
    const device = await connect('cam');
    held.delete(device.connectionId);
    await ask('cam');
    const other = await connect('mic');
    await ask('mic');
    await until(() => other.socket.frames.length === 1, "the other device's request");
    expect(device.socket.frames).toEqual([]);
    expect(await progress('cam')).toEqual([]);
  });
});

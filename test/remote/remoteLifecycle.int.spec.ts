// The remote role's start and stop: devices refused (503) until the read models have caught up, held
// devices recorded disconnected on a stop, those a crashed run left connected recorded so at the next
// start, and the bound on open sockets.
import pino from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../commands/commandContext';
import { connectDevice as connectCommand } from '../../commands/devices/deviceCommands';
import { IdAllocator } from '../../commands/idAllocator';
import { deviceStream } from '../../domain/device/deviceEvents';
import { DeviceQueries } from '../../projections/devices/deviceQueries';
import { loadConfig } from '../../service/configuration';
import { listenRemote, remoteInstanceId } from '../../service/roles/remoteRole';
import { connectDevice, linuxHello, type TestDevice } from '../support/remoteDevice';
import { readModelsCaughtUp } from '../support/readModels';
import { adaWithProject, call, startTestService, type TestService } from '../support/testService';

describe('the remote role while the service starts', () => {
  it('refuses device sockets with 503 until it is opened, and answers plain HTTP with 426', async () => {
    const config = loadConfig({ REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', DATA_DIR: '/nonexistent-remote-test' });
    const health = { failures: async () => [] };
    const role = await listenRemote({ config, log: pino({ level: 'silent' }), starting: { doing: 'catching up the read models', progress: () => undefined, health } });
    try {
      await expect(connectDevice(role.url)).rejects.toThrow(/upgrade answered 503/);
      const res = await fetch(role.url.replace('ws:', 'http:'));
      expect(res.status).toBe(426);
      expect(role.registry).toBeUndefined();
    } finally {
      await role.closeSockets();
      await new Promise((resolve) => role.server.close(resolve));
    }
  });

  it('derives a stable instance id from the host name and port unless REMOTE_INSTANCE_ID is set', () => {
    expect(remoteInstanceId({ remoteInstanceId: undefined }, 4802, 'edge box.local')).toBe('edge_box.local-4802');
    expect(remoteInstanceId({ remoteInstanceId: 'slot-7' }, 4802, 'edge')).toBe('slot-7');
  });
});

describe('the remote role across a stop and a crash', () => {
  let service: TestService;
  let ada: Record<string, string>;
  let projectId: number;
  let apiKey: string;
  const open: TestDevice[] = [];

  const history = async (deviceId: string) => (await service.stores.events.readStream(deviceStream(projectId, deviceId))).map((e) => ({ type: e.type, data: e.data as Record<string, unknown> }));
  const listed = async (deviceId: string) => {
    await readModelsCaughtUp(service);
    const res = await call(service, 'GET', `/api/${projectId}/devices`, { headers: ada });
    return (res.body.devices as Record<string, unknown>[]).find((x) => x.deviceId === deviceId);
  };
  const device = async () => {
    const d = await connectDevice(service.remoteMgmtUrl!);
    open.push(d);
    return d;
  };

  beforeAll(async () => {
    service = await startTestService({ mongo: false, env: { REMOTE_INSTANCE_ID: 'slot-a' }, remoteLimits: { maxSockets: 3 } });
    ({ ada, projectId, apiKey } = await adaWithProject(service, 'Remote lifecycle'));
  });
  afterAll(async () => {
    for (const d of open) d.ws.terminate();
    await service?.destroy();
  });

  it('refuses a socket beyond the bound with 503, and takes one again once another has gone', async () => {
    const held = [await device(), await device(), await device()];
    await expect(device()).rejects.toThrow(/upgrade answered 503/);
    held[0]!.ws.terminate();
    await held[0]!.closed;
    // The server learns of the end a moment after the client.
    for (let i = 0; i < 50; i++) {
      try {
        open.push(await connectDevice(service.remoteMgmtUrl!));
        break;
      } catch {
        await sleep(20);
      }
    }
    expect(open.at(-1)!.ws.readyState).toBe(open.at(-1)!.ws.OPEN);
    for (const d of open) d.ws.terminate();
    await Promise.all(open.map((d) => d.closed));
  });

  it('records the held devices disconnected when the service stops, and those a crash left connected at the next start', async () => {
    const d = await device();
    d.send(linuxHello(apiKey, 'dev-held'));
    expect(await d.next()).toMatchObject({ hello: true });
    // What a crash leaves: connections recorded by this instance (and another) that no process holds.
    const commands = { events: service.stores.events, ids: new IdAllocator(service.stores.events), devices: new DeviceQueries(service.stores.readStore) };
    const connect = (deviceId: string, connectionId: string) =>
      connectCommand(commands, { projectId, deviceId, deviceType: 'LINUX', connectionId, host: '10.0.0.9', mode: 'ingestion', sensors: [], supportsSnapshotStreaming: false }, systemContext('test'));
    await connect('dev-orphan', 'slot-a-0123456789abcdef');
    await connect('dev-elsewhere', 'slot-b-0123456789abcdef');
    await connect('dev-prefix', 'slot-a-x-0123456789abcdef');
    await readModelsCaughtUp(service);

    service = await service.restart();
    expect((await d.closed).code).toBe(1001);
    expect((await history('dev-held')).map((e) => [e.type, e.data.reason])).toEqual([
      ['DeviceConnected', undefined],
      ['DeviceDisconnected', 'server-stopped'],
    ]);
    expect((await history('dev-orphan')).map((e) => [e.type, e.data.reason])).toEqual([
      ['DeviceConnected', undefined],
      ['DeviceDisconnected', 'server-stopped'],
    ]);
    // Another instance's connections, and one whose id only looks like this instance's, are not this process's to end.
    expect((await history('dev-elsewhere')).map((e) => e.type)).toEqual(['DeviceConnected']);
    expect((await history('dev-prefix')).map((e) => e.type)).toEqual(['DeviceConnected']);
    expect(await listed('dev-orphan')).toMatchObject({ remote_mgmt_connected: false, remoteMgmtMode: 'disconnected' });
    expect(await listed('dev-held')).toMatchObject({ remote_mgmt_connected: false });
    expect(await listed('dev-elsewhere')).toMatchObject({ remote_mgmt_connected: true });

    // The device reconnects to the restarted service.
    const again = await device();
    again.send(linuxHello(apiKey, 'dev-held'));
    expect(await again.next()).toMatchObject({ hello: true });
    expect(await listed('dev-held')).toMatchObject({ remote_mgmt_connected: true });
  });
});

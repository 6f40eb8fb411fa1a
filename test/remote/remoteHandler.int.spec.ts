// What the sampling relay gets from the remote server: the device's parsed frames after its hello
// (not the invalid ones), a socket that answers for it, and the end of the connection after its
// disconnect is in the log.
import pino from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceStream } from '../../domain/device/deviceEvents';
import type { DeviceMessage } from '../../domain/device/remoteMessages';
import type { HeldDevice, RemoteMessageHandler } from '../../remote/remoteSocket';
import { listenRemote, type RemoteRole } from '../../service/roles/remoteRole';
import { connectDevice, linuxHello } from '../support/remoteDevice';
import { adaWithProject, startTestService, type TestService } from '../support/testService';

describe('the remote server and its message handler', () => {
  let service: TestService;
  let role: RemoteRole;
  let projectId: number;
  let apiKey: string;
  const messages: { held: HeldDevice; message: DeviceMessage }[] = [];
  const ended: { held: HeldDevice; eventsThen: string[] }[] = [];
  let throwOnMessage = false;

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    ({ projectId, apiKey } = await adaWithProject(service, 'Relay hooks'));
    const handler: RemoteMessageHandler = {
      onDeviceMessage(held, message) {
        messages.push({ held, message });
        if (throwOnMessage) throw new Error('a relay bug');
      },
      onConnectionEnded(held) {
        // The stream as it is when the hook runs: the disconnect must be there already.
        void service.stores.events.readStream(deviceStream(held.projectId, held.deviceId)).then((events) => ended.push({ held, eventsThen: events.map((e) => e.type) }));
      },
    };
    // A second remote role on the service's stores, with a handler (the service's own has none yet).
    role = await listenRemote({ config: service.config, log: pino({ level: 'silent' }), starting: { doing: 'starting', progress: () => undefined, health: { failures: async () => [] } } });
    await role.open({ stores: service.stores, health: { failures: async () => [] }, handler });
  });
  afterAll(async () => {
    await role?.closeSockets();
    await new Promise((resolve) => role?.server.close(resolve));
    await service?.destroy();
  });

  it('hands over every parsed frame after the hello, with a socket that reaches the device, and survives a handler that throws', async () => {
    const d = await connectDevice(role.url);
    d.send(linuxHello(apiKey, 'dev-relay'));
    expect(await d.next()).toMatchObject({ hello: true });
    d.send({ sample: true });
    d.send('not json');
    d.send({ sampleReading: true, progressPercentage: 42 });
    throwOnMessage = true;
    d.send({ sample: false, error: 'no camera' });
    d.send({ sampleFinished: true });
    for (let i = 0; i < 100 && messages.length < 4; i++) await sleep(20);
    expect(messages.map((m) => m.message)).toEqual([
      { kind: 'sampleAccepted' },
      { kind: 'sampleReading', progressPercentage: 42 },
      { kind: 'sampleFailed', error: 'no camera' },
      { kind: 'sampleFinished' },
    ]);
    const held = messages[0]!.held;
    expect(held).toMatchObject({ projectId, deviceId: 'dev-relay' });
    expect(role.registry?.connection(held.connectionId)).toBe(held);
    expect(held.socket.send(JSON.stringify({ stopSnapshot: true }))).toBe(true);
    expect(await d.next()).toEqual({ stopSnapshot: true });

    d.ws.close();
    await d.closed;
    for (let i = 0; i < 100 && ended.length === 0; i++) await sleep(20);
    expect(ended).toHaveLength(1);
    expect(ended[0]!.held.connectionId).toBe(held.connectionId);
    expect(ended[0]!.eventsThen).toEqual(['DeviceConnected', 'DeviceDisconnected']);
    expect(held.socket.send('{}')).toBe(false);
    expect(role.registry?.connection(held.connectionId)).toBeUndefined();
  });
});

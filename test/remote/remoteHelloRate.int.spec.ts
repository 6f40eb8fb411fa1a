// A device that says hello in a loop (each hello recorded is a DeviceConnected) is asked to come back
// later once over its budget: closed 1013 without a reply (a `hello: false` would stop the official
// library for good), nothing recorded; other devices of the project connect meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceStream } from '../../domain/device/deviceEvents';
import { connectDevice, linuxHello, type TestDevice } from '../support/remoteDevice';
import { adaWithProject, startTestService, type TestService } from '../support/testService';

describe('hellos per device', () => {
  let service: TestService;
  let projectId: number;
  let apiKey: string;
  const open: TestDevice[] = [];
  beforeAll(async () => {
    service = await startTestService({ mongo: false, remoteLimits: { hellosPerDevicePerMinute: 1, helloBurstPerDevice: 3 } });
    ({ projectId, apiKey } = await adaWithProject(service, 'Hello rate'));
  });
  afterAll(async () => {
    for (const d of open) d.ws.terminate();
    await service?.destroy();
  });
  const hello = async (deviceId: string) => {
    const d = await connectDevice(service.remoteMgmtUrl!);
    open.push(d);
    d.send(linuxHello(apiKey, deviceId));
    const reply = await d.next().catch(() => undefined);
    return { d, reply };
  };

  it('answers the burst, then closes unanswered and records nothing', async () => {
    for (let i = 0; i < 3; i++) expect((await hello('looping')).reply).toMatchObject({ hello: true });
    const connectedBefore = (await service.stores.events.readStream(deviceStream(projectId, 'looping'))).filter((e) => e.type === 'DeviceConnected').length;
    expect(connectedBefore).toBe(3);
    const over = await hello('looping');
    expect(over.reply).toBeUndefined();
    expect((await over.d.closed).code).toBe(1013);
    const connectedAfter = (await service.stores.events.readStream(deviceStream(projectId, 'looping'))).filter((e) => e.type === 'DeviceConnected').length;
    expect(connectedAfter).toBe(3);
    // Another device of the same key is not held back.
    expect((await hello('calm')).reply).toMatchObject({ hello: true });
  });
});

// The remote role in a process of its own (ROLES=remote) beside one with the other roles, on one data
// folder: it reads the keys from the shared read models, and the devices it holds are listed by the
// other process's API, connected; a startSampling answered by the other process's API reaches the
// device through the log; when it stops, the device is recorded disconnected.
import pino from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceStream } from '../../domain/device/deviceEvents';
import { loadConfig, startService, type RunningService } from '../../main';
import { connectDevice, linuxHello } from '../support/remoteDevice';
import { readModelsCaughtUp } from '../support/readModels';
import { adaWithProject, call, startTestService, type TestService } from '../support/testService';

describe('the remote role in a process of its own', () => {
  let first: TestService;
  let remote: RunningService | undefined;
  let ada: Record<string, string>;
  let projectId: number;
  let apiKey: string;

  beforeAll(async () => {
    first = await startTestService({ mongo: false });
    ({ ada, projectId, apiKey } = await adaWithProject(first, 'Split remote'));
    await readModelsCaughtUp(first);
    remote = await startService(
      loadConfig({ DATA_DIR: first.config.dataDir, API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', ROLES: 'remote', LOG_LEVEL: 'silent' }),
      pino({ level: 'silent' }),
      { readModelsWatch: { intervalMs: 50, stallMs: 2000 } },
    );
  });
  afterAll(async () => {
    await remote?.stop();
    await first?.destroy();
  });

  it('connects a device listed by the other process, and records it disconnected when it stops', async () => {
    expect(remote!.apiUrl).toBeUndefined();
    const d = await connectDevice(remote!.remoteMgmtUrl!);
    d.send(linuxHello(apiKey, 'dev-split'));
    expect(await d.next()).toMatchObject({ hello: true });
    const listed = async () => {
      await readModelsCaughtUp(first);
      return ((await call(first, 'GET', `/api/${projectId}/devices`, { headers: ada })).body.devices as Record<string, unknown>[]).find((x) => x.deviceId === 'dev-split');
    };
    expect(await listed()).toMatchObject({ remote_mgmt_connected: true, remoteMgmtMode: 'ingestion' });

    // The API of the other process appends the request; this process, holding the socket, sends it.
    const asked = await call(first, 'POST', `/api/${projectId}/device/dev-split/start-sampling`, { headers: ada, body: { label: 'split', lengthMs: 2000, category: 'testing', intervalMs: 10, sensor: 'Microphone' } });
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    const hmacKey = (await call(first, 'GET', `/api/${projectId}/devkeys`, { headers: ada })).body.hmacKey as string;
    expect(hmacKey).toBeTruthy();
    expect(await d.next()).toEqual({ sample: { label: 'split', length: 2000, path: '/api/testing/data', hmacKey, interval: 10, sensor: 'Microphone' } });
    d.send({ sampleStarted: true });
    d.send({ sample: true });
    d.send({ sampleFinished: true });
    let stages: string[] = [];
    for (let i = 0; i < 100 && !stages.includes('finished'); i++) {
      await sleep(50);
      stages = (await first.stores.events.readStream(deviceStream(projectId, 'dev-split'))).filter((e) => e.type === 'DeviceSamplingProgressed').map((e) => (e.data as { stage: string }).stage);
    }
    expect(stages).toEqual(['started', 'accepted', 'finished']);

    await remote!.stop();
    remote = undefined;
    expect((await d.closed).code).toBe(1001);
    let shown: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && shown?.remote_mgmt_connected !== false; i++) {
      shown = await listed();
      if (shown?.remote_mgmt_connected !== false) await sleep(50);
    }
    expect(shown).toMatchObject({ remote_mgmt_connected: false, remoteMgmtMode: 'disconnected' });
  });
});

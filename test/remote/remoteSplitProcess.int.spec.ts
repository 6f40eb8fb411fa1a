// The remote role in a process of its own (ROLES=remote) beside one with the other roles, on one data
// folder: it reads the keys from the shared read models, and the devices it holds are listed by the
// other process's API, connected and then, when it stops, disconnected.
import pino from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

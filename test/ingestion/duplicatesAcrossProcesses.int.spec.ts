// x-disallow-duplicates holds across ingestion processes: two services on one data folder (one
// event log) receive the same file at the same moment, and exactly one stores it. The content is
// reserved per project in the log, not only locked in one process; deleting the sample frees it.
import pino from 'pino';
import { afterAll, beforeAll, expect, it, describe } from 'vitest';
import { loadConfig, startService, type RunningService } from '../../main';
import { signedSample } from '../support/signedSample';
import { call, startTestService, type TestService, registerUser } from '../support/testService';

describe('x-disallow-duplicates across two ingestion processes', () => {
  let first: TestService;
  let second: RunningService;
  let token: string;
  let projectId: number;
  let apiKey: string;

  const send = (service: { ingestionUrl?: string | undefined }, fileName: string, body: string) =>
    fetch(`${service.ingestionUrl}/api/training/data`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': fileName, 'x-disallow-duplicates': '1' },
      body,
    });

  beforeAll(async () => {
    first = await startTestService({ mongo: false });
    token = (await registerUser(first)).token;
    const project = await call(first, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Twins' } });
    projectId = Number(project.body.id);
    apiKey = String(project.body.apiKey);
    // A second process on the same data: an ingestion listener of its own, on the read models the first keeps
    // (one process holds the projections role: service/dataFolderLock.ts).
    second = await startService(
      loadConfig({ DATA_DIR: first.config.dataDir, API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', ROLES: 'ingestion', LOG_LEVEL: 'silent' }),
      pino({ level: 'silent' }),
    );
    // It knows the key once it sees the shared read models caught up with the log (a malformed body then gets 400, not 401).
    for (let tries = 0; (await send(second, 'probe.json', '{')).status !== 400; tries++) {
      if (tries > 100) throw new Error('the second process never learned the API key');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  afterAll(async () => {
    await second?.stop();
    await first?.destroy();
  });

  it('stores the file once when both processes receive it at once, and again once it is deleted', async () => {
    for (let round = 0; round < 5; round++) {
      const body = signedSample('none', [[round, 1], [round, 2]], { alg: 'none' });
      const answers = await Promise.all([send(first, `twin.${round}.a.json`, body), send(second, `twin.${round}.b.json`, body)]);
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses, `round ${round}`).toEqual([200, 400]);
      const refused = answers.find((a) => a.status === 400)!;
      expect(await refused.text()).toMatch(/same content/);
    }
    const listed = async () =>
      ((await call(first, 'GET', `/api/${projectId}/raw-data?category=training&limit=100`, { headers: { 'x-jwt-token': token } })).body.samples as { id: number; filename: string }[]).filter((s) =>
        s.filename.startsWith('twin.0.'),
      );
    const [stored] = await listed();
    expect(stored).toBeDefined();
    // Deleted through the first process: the second takes the content again once its read models
    // have seen the deletion (they follow the log a poll interval behind).
    expect((await call(first, 'DELETE', `/api/${projectId}/raw-data/${stored!.id}`, { headers: { 'x-jwt-token': token } })).status).toBe(200);
    let status = 0;
    for (let tries = 0; tries < 40 && status !== 200; tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      status = (await send(second, 'twin.0.c.json', signedSample('none', [[0, 1], [0, 2]], { alg: 'none' }))).status;
    }
    expect(status).toBe(200);
  });
});

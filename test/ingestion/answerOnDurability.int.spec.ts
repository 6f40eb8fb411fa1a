// The ingestion API answers once a sample's event is durably in the log, not once the read
// models show it. Here the projections are stopped before the uploads, and the settle timeout is far
// longer than the test's: an answer that waited for the read models would never come in time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedSample } from '../support/signedSample';
import { call, registerUser, startTestService, type TestService } from '../support/testService';

describe('the ingestion API with its read models stopped', () => {
  let service: TestService;
  let token: string;
  let projectId: number;
  let apiKey: string;

  const sampleEvents = async () => {
    const ingested: string[] = [];
    for await (const event of service.stores.events.readAll()) if (event.type === 'SampleIngested') ingested.push(String(event.data.fileName));
    return ingested;
  };

  beforeAll(async () => {
    service = await startTestService({ mongo: false, env: { SETTLE_TIMEOUT_MS: '600000' } });
    token = (await registerUser(service)).token;
    const project = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Durable' } });
    projectId = Number(project.body.id);
    apiKey = String(project.body.apiKey);
    await service.projections!.stop();
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('answers /data and /files as soon as the event is appended, before the read models have it', async () => {
    const data = await fetch(`${service.ingestionUrl}/api/training/data`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': 'durable.1.json' },
      body: signedSample('none', [[1, 2], [3, 4]], { alg: 'none' }),
    });
    expect(data.status, await data.clone().text()).toBe(200);
    expect(await data.text()).toBe('durable.1.json');

    const form = new FormData();
    form.append('data', new Blob([signedSample('none', [[5, 6]], { alg: 'none' })], { type: 'application/json' }), 'durable.2.json');
    const files = await fetch(`${service.ingestionUrl}/api/training/files`, { method: 'POST', headers: { 'x-api-key': apiKey }, body: form });
    expect(files.status).toBe(200);
    expect(JSON.parse(await files.text())).toEqual({ success: true, files: [{ success: true, fileName: 'durable.2.json' }] });

    expect(await sampleEvents()).toEqual(['durable.1.json', 'durable.2.json']);
    const count = await call(service, 'GET', `/api/${projectId}/raw-data/count?category=training`, { headers: { 'x-jwt-token': token } });
    expect(count.body.count).toBe(0);
  }, 10_000);
});

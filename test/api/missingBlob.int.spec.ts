// A sample whose file is gone from the blob store (a lost disk, a data folder
// restored without its blobs) answers a clear 410 with a message, logged, rather than a bare 500.
import { afterEach, describe, expect, it } from 'vitest';
import { adaWithProject, call, startTestService, type TestService } from '../support/testService';
import { signedSample } from '../support/signedSample';
import { readModelsCaughtUp } from '../support/readModels';

describe('a sample whose file is missing', () => {
  let service: TestService | undefined;
  afterEach(async () => {
    await service?.destroy();
    service = undefined;
  });

  it('answers 410 saying the file is missing, not a bare 500', async () => {
    service = await startTestService({ mongo: false });
    const { ada, apiKey, projectId } = await adaWithProject(service, 'Missing');
    const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': 'lost' },
      body: signedSample('', [[1, 2]], { alg: 'none' }),
    });
    expect(res.status).toBe(200);
    await readModelsCaughtUp(service);
    const [sample] = (await call(service, 'GET', `/api/${projectId}/raw-data?category=training`, { headers: ada })).body.samples as { id: number; sha256Hash: string }[];
    expect(await service.stores.blobs.delete(sample!.sha256Hash)).toBe(true);
    const answer = await call(service, 'GET', `/api/${projectId}/raw-data/${sample!.id}`, { headers: ada });
    expect(answer.status).toBe(410);
    expect(answer.body.success).toBe(false);
    expect(String(answer.body.error)).toMatch(/file .* is missing/);
  });
});

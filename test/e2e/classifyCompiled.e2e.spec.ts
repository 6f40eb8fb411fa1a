import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledImpulse, compiledProject, startCompiledService, stopCompiledService, type CompiledService } from '../support/compiledService';
import { signedSample } from '../support/signedSample';
import { waveRows } from '../support/waveSamples';
import { call } from '../support/testService';

// The classify pool task as the image runs it (see kerasCompiled.e2e.spec.ts): built by
// service/build.ts as an entry point of its own, run by `node dist/main.js` with only the production
// node_modules, in the API's threads (GET classify/{sampleId}) and the jobs' (the classify job).
describe('classification in the compiled service', () => {
  const children: ChildProcess[] = [];
  let service: CompiledService;

  beforeAll(async () => {
    service = await startCompiledService('edge-ml-classify-compiled-', children);
  }, 120_000);

  afterAll(async () => {
    await stopCompiledService(service, children);
  });

  it('classifies a stored sample and runs model testing in worker threads on compiled code', { timeout: 180_000 }, async () => {
    const project = await compiledProject(service, { projectName: 'Compiled classify', impulse: compiledImpulse(1000), samples: 4, rows: 600 });
    const { id: projectId, apiKey, headers } = project;
    const res = await fetch(`${service.ingestionUrl}/api/testing/data`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': 'wave.test.json', 'x-label': 'wave' },
      body: signedSample('none', waveRows(600, 9, 11), { alg: 'none' }),
    });
    expect(res.status).toBe(200);
    await expect.poll(async () => (await call(service, 'GET', `/api/${projectId}/raw-data/count?category=testing`, { headers })).body.count, { timeout: 30_000 }).toBe(1);
    await project.runJob('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
    await project.runJob('/jobs/train/keras/3', { trainingCycles: 5 });
    const sampleId = ((await call(service, 'GET', `/api/${projectId}/raw-data?category=testing`, { headers })).body.samples as { id: number }[])[0]!.id;
    let classified = await call(service, 'GET', `/api/${projectId}/classify/${sampleId}`, { headers });
    for (let i = 0; i < 50 && classified.status === 400; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      classified = await call(service, 'GET', `/api/${projectId}/classify/${sampleId}`, { headers });
    }
    expect(classified.status, JSON.stringify(classified.body).slice(0, 500)).toBe(200);
    // 600 rows at 100 Hz, windows of 100 rows every 50: 11 windows.
    expect((classified.body.classifications as { result: unknown[] }[])[0]!.result).toHaveLength(11);
    const stdout = await project.runJob('/jobs/classify', {});
    expect(stdout).toMatch(/Classified 1\/1 samples \(11 windows\)/);
    // The run's read model may trail the job's end by a moment.
    await expect.poll(async () => (await call(service, 'GET', `/api/${projectId}/classify/all/result`, { headers })).status, { timeout: 10_000, interval: 100 }).toBe(200);
    const result = await call(service, 'GET', `/api/${projectId}/classify/all/result`, { headers });
    expect(result.body.predictions).toHaveLength(11);
  });
});

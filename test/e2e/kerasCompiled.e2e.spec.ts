import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledImpulse, compiledProject, startCompiledService, stopCompiledService, type CompiledService } from '../support/compiledService';
import { call } from '../support/testService';

// The keras pool task as the image runs it (see compiledService.e2e.spec.ts): built by
// service/build.ts as an entry point of its own, run by `node dist/main.js` with only the production
// node_modules, TensorFlow.js and its wasm backend loaded in a worker thread from there.
describe('keras training in the compiled service', () => {
  const children: ChildProcess[] = [];
  let service: CompiledService;

  beforeAll(async () => {
    service = await startCompiledService('edge-ml-keras-compiled-', children);
  }, 120_000);

  afterAll(async () => {
    await stopCompiledService(service, children);
  });

  it('trains the keras block in a worker thread on compiled code', { timeout: 120_000 }, async () => {
    const project = await compiledProject(service, { projectName: 'Compiled keras', impulse: compiledImpulse(2000), samples: 4, rows: 600 });
    const { id: projectId, headers } = project;
    await project.finish(Number((await call(service, 'POST', `/api/${projectId}/jobs/generate-features`, { headers, body: { dspId: 2, skipFeatureExplorer: true } })).body.id));
    // The features' read model may trail the job's end by a moment.
    const stdout = await project.runJob('/jobs/train/keras/3', { trainingCycles: 5 });
    expect(stdout).toMatch(/^Epoch 5\/5 - loss: /m);
    expect(stdout).toMatch(/Model trained \(wasm backend\)/);
  });
});

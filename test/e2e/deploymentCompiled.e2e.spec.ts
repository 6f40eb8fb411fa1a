import { execFileSync, type ChildProcess } from 'node:child_process';
import { access, chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LinuxImpulseRunner } from 'edge-impulse-linux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledImpulse, compiledProject, startCompiledService, stopCompiledService, type CompiledService } from '../support/compiledService';
import { waveRows } from '../support/waveSamples';

// The deployment builds as the image runs them (see compiledService.e2e.spec.ts): `node dist/main.js`
// with the production node_modules only, so no esbuild: the .eim and wasm module are made from the
// runtime bundles service/build.ts prebuilt into dist/deployment-runtime/.
describe('deployment builds in the compiled service', () => {
  const children: ChildProcess[] = [];
  let runner: LinuxImpulseRunner | undefined;
  let service: CompiledService;

  beforeAll(async () => {
    service = await startCompiledService('edge-ml-deploy-compiled-', children);
  }, 120_000);

  afterAll(async () => {
    await runner?.stop().catch(() => undefined);
    await stopCompiledService(service, children);
  });

  it('builds a .eim the Linux runner starts and a wasm zip, without esbuild', { timeout: 180_000 }, async () => {
    await expect(access(path.join(service.app, 'node_modules', 'esbuild'))).rejects.toThrow();
    const project = await compiledProject(service, { projectName: 'Compiled deploy', impulse: compiledImpulse(1000), samples: 4, rows: 600 });
    const { id: projectId, headers } = project;
    await project.runJob('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
    await project.runJob('/jobs/train/keras/3', { trainingCycles: 5 });
    await project.runJob('/jobs/build-ondevice-model?type=runner-linux-x86_64', { engine: 'tflite' });
    await project.runJob('/jobs/build-ondevice-model?type=wasm', { engine: 'tflite' });

    const download = async (type: string) => Buffer.from(await (await fetch(`${service.apiUrl}/v1/api/${projectId}/deployment/download?type=${type}`, { headers })).arrayBuffer());
    const eim = path.join(service.folder, 'model.eim');
    await writeFile(eim, await download('runner-linux-x86_64'));
    await chmod(eim, 0o755);
    runner = new LinuxImpulseRunner(eim);
    const model = await runner.init();
    expect(model.modelParameters).toMatchObject({ input_features_count: 200, labels: ['idle', 'wave'] });
    const { result } = await runner.classify(waveRows(100, 9, 0.2).flat());
    expect(Object.keys(result.classification!)).toEqual(['idle', 'wave']);

    const zip = path.join(service.folder, 'wasm.zip');
    await writeFile(zip, await download('wasm'));
    expect(execFileSync('unzip', ['-Z1', zip]).toString().trim().split('\n').sort()).toEqual(['README.md', 'example.mjs', 'impulse.mjs']);
  });
});

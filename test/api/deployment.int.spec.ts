import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { handleCommand } from '../../commands/handleCommand';
import { systemContext } from '../../commands/commandContext';
import { deploymentDecider } from '../../domain/deployment/deploymentDecider';
import { deploymentStream } from '../../domain/deployment/deploymentEvents';
import { anomalyDecider } from '../../domain/learn/anomalyDecider';
import { anomalyStream } from '../../domain/learn/anomalyEvents';
import { kerasDecider } from '../../domain/learn/kerasDecider';
import { kerasStream } from '../../domain/learn/kerasEvents';
import { packKerasModel } from '../../domain/learn/kerasModelBlob';
import { DEFAULT_KERAS_SETTINGS } from '../../domain/learn/kerasSettings';
import { motionImpulse } from '../support/projectWithFeatures';
import { readModelsCaughtUp } from '../support/readModels';
import { adaWithProject, call, describeOn, setups, startTestService, type TestService } from '../support/testService';

// The deployment plumbing over HTTP: build requests refused before any job exists, the build job
// requested, the latest build's state and download, and the learn blocks' model downloads. Models
// are recorded directly (their events, with real blobs) rather than trained: training is covered by
// the keras and anomaly tests, and a real build by test/e2e/eimRunner.e2e.spec.ts.
const impulse = motionImpulse;
const sha = (c: string) => c.repeat(64);
const modelJson = { modelTopology: { class_name: 'Sequential', config: { name: 'tiny', layers: [] } }, format: 'layers-model', generatedBy: 'test', convertedBy: null, weightsManifest: [{ paths: ['model.weights.bin'], weights: [{ name: 'dense/kernel', shape: [2, 2], dtype: 'float32' }] }] };
const weights = new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer);
const anomalyModel = { axes: [0, 1], scaler: { mean: [0, 0], scale: [1, 1] }, clusters: [{ center: [0, 0], radius: 1 }] };

for (const setup of setups) {
  describeOn(setup, 'deployment builds and model downloads over HTTP', () => {
    let service: TestService;
    let ada: Record<string, string>;
    let projectId: number;
    let dir: string;
    const post = (p: string, body: unknown = {}) => call(service, 'POST', `/api/${projectId}${p}`, { headers: ada, body });
    const get = (p: string) => call(service, 'GET', `/api/${projectId}${p}`, { headers: ada });
    const raw = (p: string) => fetch(`${service.apiUrl}/v1/api/${projectId}${p}`, { headers: ada });
    const jobs = async () => ((await get('/jobs/all?limit=1000')).body.jobs as { id: number; category: string; categoryKey?: string }[]) ?? [];
    const refused = async (p: string, body: unknown, status: number, error: RegExp) => {
      const res = await post(p, body);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(String(res.body.error)).toMatch(error);
    };
    const recordKeras = async () => {
      const blob = await service.stores.blobs.put(Buffer.from(packKerasModel({ modelJson, weights })));
      const data = {
        projectId, learnId: 3, jobId: 900, model: blob.sha256, seed: 3, settings: DEFAULT_KERAS_SETTINGS,
        features: [{ dspId: 2, x: sha('a'), y: sha('b'), position: '1', sourcePosition: '1' }],
        classes: ['idle', 'wave'], inputShape: [2], parameterCount: 4, operations: 8, trainingWindowCount: 10,
        validation: { loss: 0.1, accuracy: 1, confusionMatrix: [[1, 0, 0], [0, 1, 0]], report: {}, windowCount: 2 }, trained: new Date().toISOString(),
      };
      await handleCommand(service.stores.events, kerasStream(projectId, 3), kerasDecider, { type: 'RecordKerasModel', data }, systemContext('test'));
      return blob.sha256;
    };
    const recordAnomaly = async () => {
      const blob = await service.stores.blobs.put(Buffer.from(JSON.stringify(anomalyModel)));
      const data = {
        projectId, learnId: 4, impulseId: 1, jobId: 901, model: blob.sha256,
        features: [{ dspId: 2, x: sha('a'), windowCount: 10, featureCount: 2, sourcePosition: '1' }],
        settings: { axes: [0, 1], clusterCount: 1, minimumConfidenceRating: 0.3 }, seed: 1, clusterCount: 1, iterations: 3, trained: new Date().toISOString(),
      };
      await handleCommand(service.stores.events, anomalyStream(projectId, 4), anomalyDecider, { type: 'RecordAnomalyModel', data }, systemContext('test'));
      return blob.sha256;
    };

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      ({ ada, projectId } = await adaWithProject(service, 'Déploy me!'));
      dir = await mkdtemp(path.join(tmpdir(), 'deployment-http-'));
    });
    afterAll(async () => {
      await service?.destroy();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('refuses a type that is no target, one this service does not build, an engine or model type the target does not take: a 400 naming it', async () => {
      await refused('/jobs/build-ondevice-model?type=fpga-9000', { engine: 'tflite' }, 400, /Unknown deployment type "fpga-9000"/);
      await refused('/jobs/build-ondevice-model?type=arduino', { engine: 'tflite' }, 400, /"arduino" is not built by this service/);
      await refused('/jobs/build-ondevice-model?type=wasm', { engine: 'tensorrt' }, 400, /Unknown engine "tensorrt" for deployment type "wasm"/);
      await refused('/jobs/build-ondevice-model?type=wasm', { engine: 'tflite', modelType: 'int8' }, 400, /Model type "int8"/);
      await refused('/jobs/build-ondevice-model?type=wasm', {}, 400, /"engine" is required/);
      await refused('/jobs/build-ondevice-model', { engine: 'tflite' }, 400, /"type" is required/);
      expect((await get('/deployment?type=fpga-9000')).status).toBe(400);
      expect(await jobs()).toEqual([]);
    });

    it('refuses to build without an impulse, or with a learn block not trained, naming it; no job is made', async () => {
      await refused('/jobs/build-ondevice-model?type=runner-linux-x86_64', { engine: 'tflite' }, 400, /no impulse/);
      expect((await post('/impulse', impulse)).status).toBe(200);
      await refused('/jobs/build-ondevice-model?type=runner-linux-x86_64', { engine: 'tflite' }, 400, /No trained model for learn block 3 \("Classifier"\), learn block 4 \("Anomaly detection"\): train them first/);
      await recordKeras();
      await readModelsCaughtUp(service);
      await refused('/jobs/build-ondevice-model?type=runner-linux-x86_64', { engine: 'tflite' }, 400, /No trained model for learn block 4 \("Anomaly detection"\): train it first/);
      expect(await jobs()).toEqual([]);
    });

    it('answers that no build exists yet, and a 404 for its download', async () => {
      expect((await get('/deployment?type=wasm')).body).toEqual({ success: true, hasDeployment: false });
      const res = await get('/deployment/download?type=wasm');
      expect(res.status).toBe(404);
      expect(String(res.body.error)).toMatch(/No wasm build of this project/);
    });

    it('requests a build job once every learn block is trained, answering its id and deployment version', async () => {
      await recordAnomaly();
      await readModelsCaughtUp(service);
      const res = await post('/jobs/build-ondevice-model?type=runner-linux-x86_64', { engine: 'tflite' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ success: true, id: expect.any(Number), deploymentVersion: expect.any(Number) });
      const [job] = (await jobs()).filter((j) => j.id === res.body.id);
      expect(job).toMatchObject({ category: 'Build on-device model' });
      const requested = (await service.stores.events.readStream(`job-${String(res.body.id)}`))[0]!;
      expect(requested.data).toMatchObject({ categoryKey: 'build-ondevice-model', parameters: { type: 'runner-linux-x86_64', engine: 'tflite', impulseId: expect.any(Number), version: res.body.deploymentVersion } });
      // The job runs (its result is the e2e tests' subject): let it end so it races nothing below.
      await expect.poll(async () => ((await get(`/jobs/${String(res.body.id)}/status`)).body.job as { finished?: string }).finished, { timeout: 60_000, interval: 200 }).toBeDefined();
      await readModelsCaughtUp(service);
    });

    it('answers the latest build of a type and downloads its bytes with a file name; another engine or type has none', async () => {
      const bytes = Buffer.from('#!/usr/bin/env node\n// a build\n');
      const blob = await service.stores.blobs.put(bytes);
      const record = (version: number, jobId: number, artifact: string, size: number) =>
        handleCommand(service.stores.events, deploymentStream(projectId), deploymentDecider, {
          type: 'RecordDeployment',
          data: { projectId, impulseId: 1, jobId, version, type: 'runner-linux-x86_64', engine: 'tflite', artifact, size, fileName: `deploy-me-v${version}-linux-x86_64.eim`, models: [{ learnId: 3, type: 'keras', model: sha('c') }], built: new Date().toISOString() },
        }, systemContext('test'));
      await record(7, 1001, sha('d'), 3);
      await record(8, 1002, blob.sha256, bytes.length);
      // A retried job records its build once.
      await record(8, 1002, blob.sha256, bytes.length);
      await readModelsCaughtUp(service);
      const recorded = (await service.stores.events.readStream(deploymentStream(projectId))).filter((e) => [1001, 1002].includes(Number(e.data.jobId)));
      expect(recorded.length).toBe(2);
      expect((await get('/deployment?type=runner-linux-x86_64')).body).toEqual({ success: true, hasDeployment: true, version: 8 });
      expect((await get('/deployment?type=runner-linux-x86_64&engine=tflite')).body).toMatchObject({ hasDeployment: true });
      expect((await get('/deployment?type=wasm')).body).toMatchObject({ hasDeployment: false });
      expect((await get('/deployment?type=runner-linux-x86_64&engine=tflite-eon')).status).toBe(400);
      const res = await raw('/deployment/download?type=runner-linux-x86_64');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="deploy-me-v8-linux-x86_64.eim"');
      expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
    });

    it("downloads a keras block's TensorFlow.js model as a zip and an anomaly block's model as JSON; other ids and blocks are 404s", async () => {
      const res = await raw('/learn-data/3/model/tfjs');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/zip');
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="deploy-me-classifier-3-tfjs.zip"');
      const zip = path.join(dir, 'model.zip');
      await writeFile(zip, Buffer.from(await res.arrayBuffer()));
      execFileSync('unzip', ['-o', '-q', zip, '-d', path.join(dir, 'model')]);
      expect(JSON.parse(await readFile(path.join(dir, 'model', 'model.json'), 'utf8'))).toEqual(modelJson);
      expect(new Uint8Array(await readFile(path.join(dir, 'model', 'model.weights.bin')))).toEqual(weights);
      const anomaly = await raw('/learn-data/4/model/anomaly-model');
      expect(anomaly.status).toBe(200);
      expect(await anomaly.json()).toEqual(anomalyModel);
      expect((await get('/learn-data/3/model/anomaly-model')).body.error).toMatch(/its model is downloaded as "tfjs" or "tflite-float32"/);
      // This stored model has no layers: nothing a TensorFlow Lite file can hold (the export of real ones: tfliteExport.unit.spec.ts, kerasTraining.int.spec.ts).
      const tflite = await get('/learn-data/3/model/tflite-float32');
      expect(tflite.status).toBe(400);
      expect(tflite.body.error).toMatch(/only Sequential models with layers/);
      expect((await get('/learn-data/4/model/tfjs')).status).toBe(404);
      expect((await get('/learn-data/99/model/tfjs')).status).toBe(404);
      expect((await get('/learn-data/abc/model/tfjs')).status).toBe(400);
    });
  });
}

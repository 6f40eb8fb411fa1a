// The classification benchmark: windows classified per second by GET classify/{sampleId} (the
// whole impulse, spectral features then a keras classifier and a K-means anomaly block, on every
// window of a 60 s testing sample: 591 windows), called by a load generator in its own process
// (bench/featureJobClient.ts) with 1 and 2 keep-alive connections. The ceiling, measured in the same
// run: the same windows through the same runtime (domain/learn/impulseRuntime.ts, classifyBatch,
// TensorFlow.js wasm) called directly in one thread, with no HTTP, no sample file to read and decode,
// no thread pool and no JSON answer: the least the endpoint can do per window on one core.
import { fork } from 'node:child_process';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type * as TF from '@tensorflow/tfjs';
import { buildImpulseRuntimeSpec } from '../commands/classify/impulseRuntimeSpec';
import { createImpulseRunner } from '../domain/learn/impulseRuntime';
import { AnomalyModelQueries } from '../projections/anomalyModels/anomalyModelQueries';
import { DspFeaturesQueries } from '../projections/dspFeatures/dspFeaturesQueries';
import { ImpulseQueries } from '../projections/impulses/impulseQueries';
import { KerasModelQueries } from '../projections/kerasModels/kerasModelQueries';
import { ProjectQueries } from '../projections/projects/projectQueries';
import { SampleQueries } from '../projections/samples/sampleQueries';
import { signedSample } from '../test/support/signedSample';
import type { BenchResult } from './benchResult';
import { JSON_HEADERS, expectOk, ownerWithProject, quantiles, request, startBenchService } from './benchKit';
import type { LoadCommand, LoadMessage, LoadSetup } from './featureJobClient';

const HZ = 100;
const WINDOW_ROWS = 100;
const STEP_ROWS = 10;
const TESTING_ROWS = 6000;
const ROUND_MS = 8000;

const motion = (label: string, n: number, phase: number) => {
  const f = label === 'idle' ? 1 : 9;
  return Array.from({ length: n }, (_, i) => [Math.sin((2 * Math.PI * f * i) / HZ + phase), Math.cos((2 * Math.PI * f * i) / HZ + phase) / 2]);
};

async function tensorflowWasm(): Promise<typeof TF> {
  const tf = await import('@tensorflow/tfjs');
  tf.enableProdMode();
  await import('@tensorflow/tfjs-backend-wasm');
  await tf.setBackend('wasm');
  await tf.ready();
  return tf;
}

export async function benchClassification(): Promise<BenchResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const started = await startBenchService('classification');
  let client: ReturnType<typeof fork> | undefined;
  try {
    const api = started.service.apiUrl!;
    const ingestion = started.service.ingestionUrl!;
    const { token, projectId, apiKey } = await ownerWithProject(agent, api, 'benchclassify', 'Bench classification');
    const auth = { ...JSON_HEADERS, 'x-jwt-token': token };
    const call = async (method: 'GET' | 'POST', p: string, body?: unknown) => JSON.parse(expectOk(await request(agent, new URL(`/v1/api/${projectId}${p}`, api), method, auth, body === undefined ? undefined : JSON.stringify(body)), `${method} ${p}`)) as Record<string, unknown>;
    await call('POST', '/impulse', {
      name: 'Motion',
      inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 1000, windowIncreaseMs: 100, frequencyHz: HZ }],
      dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
      learnBlocks: [
        { id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] },
        { id: 4, type: 'anomaly', name: 'Anomaly', title: 'Anomaly detection (K-means)', dsp: [2] },
      ],
    });
    const ingest = async (category: 'training' | 'testing', label: string, values: number[][], name: string) =>
      expectOk(await request(agent, new URL(`/api/${category}/data`, ingestion), 'POST', { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': `${name}.json`, 'x-label': label }, signedSample('none', values, { alg: 'none' })), 'ingest');
    for (let n = 0; n < 10; n++) await ingest('training', n % 2 === 0 ? 'idle' : 'wave', motion(n % 2 === 0 ? 'idle' : 'wave', 1000, n), `train.${n}`);
    const testing = motion('wave', TESTING_ROWS, 0.3);
    await ingest('testing', 'wave', testing, 'long');
    await sleep(500);
    const finish = async (jobId: number) => {
      for (;;) {
        const { job } = (await call('GET', `/jobs/${jobId}/status`)) as { job: { finishedSuccessful?: boolean } };
        if (job.finishedSuccessful !== undefined) {
          if (!job.finishedSuccessful) throw new Error(`job ${jobId} failed`);
          return;
        }
        await sleep(50);
      }
    };
    await finish(Number((await call('POST', '/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true })).id));
    await sleep(300);
    await finish(Number((await call('POST', '/jobs/train/keras/3', { trainingCycles: 10 })).id));
    await finish(Number((await call('POST', '/jobs/train/anomaly/4', { axes: [0, 1, 2], clusterCount: 4, minimumConfidenceRating: 0.3 })).id));
    await sleep(300);
    const samples = (await call('GET', '/raw-data?category=testing')).samples as { id: number }[];
    const sampleId = samples[0]!.id;
    const answer = await call('GET', `/classify/${sampleId}`);
    const windowCount = ((answer.classifications as { result: unknown[] }[])[0]!.result).length;

    // The ceiling: the runtime on the same windows, in this thread.
    const r = started.service.stores.readStore;
    const reads = { blobs: started.service.stores.blobs, projects: new ProjectQueries(r), impulses: new ImpulseQueries(r), samples: new SampleQueries(r), dspFeatures: new DspFeaturesQueries(r), kerasModels: new KerasModelQueries(r), anomalyModels: new AnomalyModelQueries(r) };
    const { spec } = await buildImpulseRuntimeSpec(reads, projectId);
    const runner = await createImpulseRunner(spec, await tensorflowWasm());
    const raws: number[][] = [];
    for (let start = 0; start + WINDOW_ROWS <= TESTING_ROWS; start += STEP_ROWS) raws.push(testing.slice(start, start + WINDOW_ROWS).flat());
    await runner.classifyBatch(raws);
    let ceilingWindows = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < ROUND_MS / 2) ceilingWindows += (await runner.classifyBatch(raws)).length;
    const ceiling = ceilingWindows / ((performance.now() - t0) / 1000);
    runner.dispose();

    client = fork(new URL('./featureJobClient.ts', import.meta.url), { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
    const child = client;
    const next = (kind: LoadMessage['kind']) =>
      new Promise<LoadMessage>((resolve) => {
        const on = (m: LoadMessage) => {
          if (m.kind === kind) {
            child.off('message', on);
            resolve(m);
          }
        };
        child.on('message', on);
      });
    const lines = [`a ${TESTING_ROWS / HZ} s sample of 2 axes at ${HZ} Hz, windows of 1 s every 100 ms: ${windowCount} windows (the runtime cuts ${raws.length}); spectral features, dense 20/10 classifier, K-means anomaly`];
    lines.push(`  ceiling, the runtime called directly in one thread (wasm): ${ceiling.toFixed(0)} windows/s`);
    let waiting = next('ready');
    child.send({ apiUrl: api, projectId, token, connections: 1, path: `/v1/api/${projectId}/classify/${sampleId}` } satisfies LoadSetup);
    await waiting;
    for (const connections of [1, 2]) {
      if (connections > 1) {
        // A new setup for more connections: the client keeps its agent per setup.
        waiting = next('ready');
        child.send({ apiUrl: api, projectId, token, connections, path: `/v1/api/${projectId}/classify/${sampleId}` } satisfies LoadSetup);
        await waiting;
      }
      waiting = next('running');
      child.send({ kind: 'run' } satisfies LoadCommand);
      await waiting;
      await sleep(ROUND_MS);
      waiting = next('result');
      child.send({ kind: 'stop' } satisfies LoadCommand);
      const result = (await waiting) as Extract<LoadMessage, { kind: 'result' }>;
      const perSecond = (result.latencies.length * windowCount) / (ROUND_MS / 1000);
      const [p50, p99] = quantiles(result.latencies, [0.5, 0.99]);
      lines.push(
        `  GET classify/{sampleId}, ${connections} connection${connections > 1 ? 's' : ''}: ${result.latencies.length} calls, ${perSecond.toFixed(0)} windows/s (${(perSecond / ceiling).toFixed(2)} of the ceiling), p50 ${p50?.toFixed(0)} ms, p99 ${p99?.toFixed(0)} ms${result.failures ? `, ${result.failures} FAILED: ${result.firstFailure}` : ''}`,
      );
    }
    child.send({ kind: 'exit' } satisfies LoadCommand);
    return { name: 'classification: windows per second through GET classify/{sampleId}, against the runtime called directly', lines };
  } finally {
    if (client && client.exitCode === null) client.kill();
    agent.destroy();
    await started.stop();
  }
}

// The tuner run's benchmark: an 8-trial random run through the whole service (embedded default, in
// this process), tuningWorkers = the cores. Measured: the run's wall time (POST jobs/optimize to its
// coordinator job finished) against the sum of its trials' times (each trial job's start to end) and
// against the ideal, that sum spread over the cores the run may use: how well the cores are used.
// And the service's peak RSS over its idle RSS during the run (sampled every 20 ms).
// The trials are the production `tuner-trial` runner's: features in memory, a dense model trained and
// evaluated, estimates for the target device.
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { TUNER_TRIAL } from '../commands/optimize/tunerCoordinator';
import { signedSample } from '../test/support/signedSample';
import type { BenchResult } from './benchResult';
import { JSON_HEADERS, expectOk, ownerWithProject, request, startBenchService } from './benchKit';

const TRIALS = 8;
const RSS_SAMPLE_MS = 20;
const RUN_TIMEOUT_MS = 30 * 60_000;

const IMPULSE = {
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 500, windowIncreaseMs: 250, frequencyHz: 100 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
};

const rows = (f: number, seed: number) => Array.from({ length: 400 }, (_, i) => [Math.sin((2 * Math.PI * f * i) / 100 + seed), Math.cos((2 * Math.PI * f * i) / 100 + seed) / 2]);

export async function benchTunerRun(): Promise<BenchResult> {
  const agent = new http.Agent({ keepAlive: true });
  const started = await startBenchService('tuner-run');
  try {
    const { service } = started;
    const api = service.apiUrl!;
    const { token, projectId, apiKey } = await ownerWithProject(agent, api, 'benchtuner', 'Bench tuner');
    const auth = { ...JSON_HEADERS, 'x-jwt-token': token };
    const call = async (method: string, path: string, body?: unknown) => JSON.parse(expectOk(await request(agent, new URL(`/v1/api/${projectId}${path}`, api), method, auth, body === undefined ? undefined : JSON.stringify(body)), `${method} ${path}`)) as Record<string, unknown>;
    await call('POST', '/impulse', IMPULSE);
    for (const [label, f] of [['idle', 1], ['wave', 9]] as const) {
      for (const seed of [0, 1]) {
        const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': `${label}.${seed}.json`, 'x-label': label },
          body: signedSample('none', rows(f, seed), { alg: 'none' }),
        });
        if (res.status !== 200) throw new Error(`ingestion answered ${res.status}`);
      }
    }
    if (!(await service.readModels.waitFor((await service.stores.events.headPosition())!, 10_000))) throw new Error("the read models did not reach the log's head within 10 s");
    const cores = availableParallelism();
    await call('POST', '/optimize/config', { targetLatency: 100, targetDevice: { name: 'cortex-m4f-80mhz', ram: 131072, rom: 1048576 }, tuningMaxTrials: TRIALS, tuningWorkers: cores, trainingCycles: 30, tuningAlgorithm: 'random' });

    const idleRss = process.memoryUsage().rss;
    let peakRss = idleRss;
    const timer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), RSS_SAMPLE_MS);
    const t0 = performance.now();
    const runId = Number((await call('POST', '/jobs/optimize')).id);
    let job: Record<string, unknown> = {};
    for (const until = Date.now() + RUN_TIMEOUT_MS; job.finishedSuccessful === undefined; await sleep(50)) {
      if (Date.now() > until) throw new Error('the tuner run did not end');
      job = (await call('GET', `/jobs/${runId}/status`)).job as Record<string, unknown>;
    }
    const wallS = (performance.now() - t0) / 1000;
    clearInterval(timer);
    if (job.finishedSuccessful !== true) throw new Error(`the run failed: ${String(job.additionalInfo)}`);
    const jobs = (await call('GET', '/jobs/all?limit=1000')).jobs as { categoryKey: string; started?: string; finished?: string }[];
    const trials = jobs.filter((j) => j.categoryKey === TUNER_TRIAL);
    const sumS = trials.reduce((s, j) => s + (Date.parse(j.finished!) - Date.parse(j.started!)) / 1000, 0);
    const capacity = Math.min(cores, TRIALS);
    const idealS = sumS / capacity;
    return {
      name: `tunerRun (${TRIALS} trials, ${capacity} at once on ${cores} cores; the production tuner-trial runner)`,
      lines: [
        `wall ${wallS.toFixed(2)} s; sum of the ${trials.length} trials' times ${sumS.toFixed(2)} s; ideal (sum / ${capacity}) ${idealS.toFixed(2)} s`,
        `cores used: ${(idealS / wallS).toFixed(2)} of the ideal (sum / wall = ${(sumS / wallS).toFixed(2)} trials running on average)`,
        `peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB, ${((peakRss - idleRss) / 2 ** 20).toFixed(0)} MiB over idle`,
      ],
    };
  } finally {
    agent.destroy();
    await started.stop();
  }
}

// The feature job's benchmark: a 10,000-window generate-features job through the whole service (embedded
// default, in this process, talking only to 127.0.0.1), with a load generator in a child process
// (bench/featureJobClient.ts) calling GET /v1/api/{projectId} over 8 keep-alive connections.
// Setup: 200 unsigned (alg none) JSON training samples of two labels, 5,100 rows of two axes at
// 100 Hz, sent concurrently to the ingestion API; an impulse of 2000 ms windows every 1000 ms and
// spectral analysis with its defaults: 50 windows a sample. Measured:
// - the job's wall time, from the POST to its status showing it finished, and windows/s;
// - the service's peak RSS over its idle RSS while the job runs (sampled every 20 ms in this process);
// - p50/p99 of GET /v1/api/{projectId} while the job runs, next to the same load with no job running
//   measured just before in the same run (the baseline). Aim: p99 under 50 ms while the job runs.
import { fork } from 'node:child_process';
import http from 'node:http';
import type { BenchResult } from './benchResult';
import { HOST, JSON_HEADERS, expectOk, ownerWithProject, quantiles, request, startBenchService } from './benchKit';
import type { LoadCommand, LoadMessage, LoadSetup } from './featureJobClient';
import { signedSample } from '../test/support/signedSample';

const SAMPLES = 200;
const HZ = 100;
const WINDOW_MS = 2000;
const INCREASE_MS = 1000;
const WINDOWS_PER_SAMPLE = 50;
const ROWS = (WINDOW_MS + (WINDOWS_PER_SAMPLE - 1) * INCREASE_MS) * (HZ / 1000);
const INGEST_CONCURRENCY = 16;
const CONNECTIONS = 8;
const BASELINE_MS = 3000;
const RSS_SAMPLE_MS = 20;
const POLL_MS = 50;
const JOB_TIMEOUT_MS = 15 * 60_000;
const AIM_P99_MS = 50;

const IMPULSE = {
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: WINDOW_MS, windowIncreaseMs: INCREASE_MS, frequencyHz: HZ }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
};

/** Two axes: `idle` a slow sine, `wave` a fast one, each sample with its own phase. */
function rows(label: string, seed: number): number[][] {
  const f = label === 'idle' ? 1 : 9;
  return Array.from({ length: ROWS }, (_, i) => [Math.round(1000 * Math.sin((2 * Math.PI * f * i) / HZ + seed)) / 100, Math.round(1000 * Math.cos((2 * Math.PI * f * i) / HZ + seed)) / 200]);
}

export async function benchFeatureJob(): Promise<BenchResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: INGEST_CONCURRENCY });
  const started = await startBenchService('feature-job');
  let timer: NodeJS.Timeout | undefined;
  let client: ReturnType<typeof fork> | undefined;
  try {
    const { service } = started;
    const api = service.apiUrl;
    const ingestion = service.ingestionUrl;
    if (!api || !ingestion) throw new Error('the service started without its api and ingestion roles');
    const { token, projectId, apiKey } = await ownerWithProject(agent, api, 'benchjob', 'Bench feature job');
    const auth = { ...JSON_HEADERS, 'x-jwt-token': token };
    const get = async (path: string) => JSON.parse(expectOk(await request(agent, new URL(`/v1/api/${projectId}${path}`, api), 'GET', auth), `GET ${path}`)) as Record<string, unknown>;

    // Setup: the impulse, then the samples, INGEST_CONCURRENCY at a time.
    expectOk(await request(agent, new URL(`/v1/api/${projectId}/impulse`, api), 'POST', auth, JSON.stringify(IMPULSE)), 'impulse create');
    const setupStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: INGEST_CONCURRENCY }, async () => {
        for (let n = next++; n < SAMPLES; n = next++) {
          const label = n % 2 === 0 ? 'idle' : 'wave';
          const fileName = `${label}.${n}.json`;
          const reply = await request(agent, new URL('/api/training/data', ingestion), 'POST', { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': fileName, 'x-label': label }, signedSample('none', rows(label, n), { alg: 'none', intervalMs: 1000 / HZ }));
          if (reply.status !== 200) throw new Error(`POST /api/training/data answered ${reply.status}: ${reply.text.slice(0, 300)}`);
        }
      }),
    );
    const setupSeconds = (performance.now() - setupStart) / 1000;
    // The sample read model may trail the last upload a moment: wait until the DSP block counts them all.
    let expected = 0;
    for (let i = 0; i < 100; i++) {
      expected = Number(((await get('/dsp/2')).dsp as { expectedWindowCount?: number }).expectedWindowCount ?? 0);
      if (expected >= SAMPLES * WINDOWS_PER_SAMPLE) break;
      await sleep(100);
    }

    // The load generator, in its own process.
    client = fork(new URL('./featureJobClient.ts', import.meta.url), { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
    const child = client;
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const next1 = (kind: LoadMessage['kind']) =>
      Promise.race([
        new Promise<LoadMessage>((resolve) => {
          const on = (m: LoadMessage) => {
            if (m.kind === kind) {
              child.off('message', on);
              resolve(m);
            }
          };
          child.on('message', on);
        }),
        exited.then((code) => Promise.reject(new Error(`the load generator exited with ${code}`))),
      ]);
    const command = (c: LoadSetup | LoadCommand) => child.send(c);
    let waiting = next1('ready');
    command({ apiUrl: api, projectId, token, connections: CONNECTIONS });
    await waiting;
    const loadRound = async (during: () => Promise<void>) => {
      let w = next1('running');
      command({ kind: 'run' });
      await w;
      await during();
      w = next1('result');
      command({ kind: 'stop' });
      return (await w) as Extract<LoadMessage, { kind: 'result' }>;
    };

    // Baseline: the same load with no job running (the first second is warm-up, dropped).
    await loadRound(() => sleep(1000));
    const baseline = await loadRound(() => sleep(BASELINE_MS));

    // The job, with the load running and RSS sampled.
    global.gc?.();
    const idle = await idleRss();
    let peak = process.memoryUsage.rss();
    let jobId = 0;
    let jobSeconds = 0;
    let succeeded: boolean | undefined;
    const during = await loadRound(async () => {
      timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), RSS_SAMPLE_MS);
      const t = performance.now();
      const res = JSON.parse(expectOk(await request(agent, new URL(`/v1/api/${projectId}/jobs/generate-features`, api), 'POST', auth, JSON.stringify({ dspId: 2 })), 'generate-features')) as { id: number };
      jobId = Number(res.id);
      for (;;) {
        const { job } = (await get(`/jobs/${jobId}/status`)) as { job: { finishedSuccessful?: boolean } };
        if (job.finishedSuccessful !== undefined) {
          succeeded = job.finishedSuccessful;
          break;
        }
        if (performance.now() - t > JOB_TIMEOUT_MS) throw new Error(`job ${jobId} did not finish in ${JOB_TIMEOUT_MS / 60_000} min`);
        await sleep(POLL_MS);
      }
      jobSeconds = (performance.now() - t) / 1000;
      clearInterval(timer);
      timer = undefined;
    });
    if (!succeeded) {
      const stdout = ((await get(`/jobs/${jobId}/stdout`)).stdout as { data: string }[]).map((l) => l.data).join('');
      throw new Error(`job ${jobId} failed: ${stdout.slice(-1000)}`);
    }
    let windows: number | undefined;
    let featureCount: number | undefined;
    // The result is recorded before the job ends; the read model may take a moment more.
    for (let i = 0; i < 100 && featureCount === undefined; i++) {
      const features = ((await get('/dsp/2')).dsp as { features: { generated: boolean; count?: number } }).features;
      if (features.generated) featureCount = features.count;
      else await sleep(100);
    }
    if (featureCount !== undefined) windows = ((await get('/dsp/2/metadata?excludeIncludedSamples=true')) as { windowCount?: number }).windowCount;
    const waitExit = exited;
    command({ kind: 'exit' });
    await waitExit;
    client = undefined;

    const lat = (r: Extract<LoadMessage, { kind: 'result' }>, seconds: number) => {
      const [p50, p99, max] = quantiles(r.latencies, [0.5, 0.99, 1]);
      return `${r.latencies.length.toLocaleString('en-US')} calls (${Math.round(r.latencies.length / seconds).toLocaleString('en-US')}/s), p50 ${p50!.toFixed(2)} ms, p99 ${p99!.toFixed(2)} ms, max ${max!.toFixed(1)} ms${r.failures ? `, ${r.failures} FAILED (${r.firstFailure})` : ''}`;
    };
    const [, p99During] = quantiles(during.latencies, [0.5, 0.99]);
    const windowCount = windows ?? expected;
    return {
      name: 'featureJob: a 10,000-window generate-features job (service and load generator in separate processes)',
      lines: [
        `service in-process on ${HOST} (embedded default, all roles); load generator in a child process; RSS sampled every ${RSS_SAMPLE_MS} ms in the service's process`,
        `data: ${SAMPLES} training samples (2 labels) of ${ROWS} rows x 2 axes at ${HZ} Hz, ingested ${INGEST_CONCURRENCY} at a time in ${setupSeconds.toFixed(1)} s; spectral-analysis defaults, ${WINDOW_MS} ms windows every ${INCREASE_MS} ms`,
        `job ${jobId}: ${windowCount.toLocaleString('en-US')} windows (expectedWindowCount ${expected.toLocaleString('en-US')}), ${featureCount ?? '?'} features each, in ${jobSeconds.toFixed(2)} s (request to status finished, polled every ${POLL_MS} ms): ${Math.round(windowCount / jobSeconds).toLocaleString('en-US')} windows/s`,
        `service RSS idle ${mb(idle)} MB, peak during the job ${mb(peak)} MB: ${mb(peak - idle)} MB over idle`,
        `GET /v1/api/{projectId} (JWT), ${CONNECTIONS} keep-alive connections, one request in flight on each:`,
        `  no job (baseline, ${BASELINE_MS / 1000} s after 1 s warm-up): ${lat(baseline, BASELINE_MS / 1000)}`,
        `  during the job:                         ${lat(during, jobSeconds)}`,
        `  aim p99 < ${AIM_P99_MS} ms: ${p99During! < AIM_P99_MS && during.failures === 0 ? 'met' : 'not met'}`,
      ],
    };
  } finally {
    if (timer) clearInterval(timer);
    if (client && client.exitCode === null) client.kill();
    agent.destroy();
    await started.stop();
  }
}

/** The lowest of a few samples a little apart: idle, after start-up's garbage is collectable. */
async function idleRss(): Promise<number> {
  let lowest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 10; i++) {
    lowest = Math.min(lowest, process.memoryUsage.rss());
    await sleep(50);
  }
  return lowest;
}

function mb(bytes: number): string {
  return (bytes / 1e6).toFixed(0);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

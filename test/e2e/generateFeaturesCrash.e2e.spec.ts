import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { dspFeaturesStream } from '../../domain/dsp/dspFeaturesEvents';
import { jobStream } from '../../domain/job/jobEvents';
import { CrashHarness, exitOf, type ServiceProcess } from '../support/serviceProcess';
import { uploadWaveSamples } from '../support/waveSamples';
import { call, signup } from '../support/testService';

// A real generate-features job in a service process killed with SIGKILL halfway: after a restart
// the job is found (its heartbeats stopped) and retried, and this time ends with its features.
// Never left "running". A worker silent for 3 × 300 ms is taken for dead (JOB_HEARTBEAT_MS).
// 40 samples of 30 s at 100 Hz, 2 s windows every 100 ms, spectral analysis on two axes:
// 281 windows a sample, 11,240 in all, so the job runs for seconds.
const SAMPLES = 40;
const ROWS = 3000;
const WINDOWS = SAMPLES * ((ROWS - 200) / 10 + 1);
const impulse = {
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 2000, windowIncreaseMs: 100, frequencyHz: 100 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
};

describe('a service process killed during a generate-features job', () => {
  const harness = new CrashHarness('edge-ml-features-crash-', { JOB_HEARTBEAT_MS: '300' });
  afterAll(() => harness.cleanup());

  it('retries the job after a restart, which then generates the features; the job never stays running', { timeout: 180_000 }, async () => {
    let service: ServiceProcess = await harness.start();
    await call(service, 'POST', '/api-user-create', { body: signup() });
    const token = String((await call(service, 'POST', '/api-login', { body: { username: 'ada', password: 'correct horse battery' } })).body.token);
    const headers = { 'x-jwt-token': token };
    const project = await call(service, 'POST', '/api/projects/create', { headers, body: { projectName: 'Crash during features' } });
    const projectId = Number(project.body.id);
    expect((await call(service, 'POST', `/api/${projectId}/impulse`, { headers, body: impulse })).status).toBe(200);
    // Ingestion answers once the samples are durable; the job request reads them from the read models.
    await uploadWaveSamples(service, { id: projectId, apiKey: String(project.body.apiKey), headers }, SAMPLES, ROWS);

    const requested = await call(service, 'POST', `/api/${projectId}/jobs/generate-features`, { headers, body: { dspId: 2, skipFeatureExplorer: true } });
    expect(requested.status, JSON.stringify(requested.body)).toBe(200);
    const jobId = Number(requested.body.id);
    const started = Date.now();

    // Read the log beside the service (another connection to its SQLite file), so it can be read while the service is down.
    const log = harness.log();
    const events = async () => (await log.readStream(jobStream(jobId))).map((e) => ({ type: e.type, data: e.data as Record<string, unknown> }));
    const output = async () => (await events()).filter((e) => e.type === 'JobOutputWritten').map((e) => JSON.stringify(e.data)).join('\n');
    const until = async (check: () => Promise<boolean>, what: string, timeoutMs: number) => {
      const end = Date.now() + timeoutMs;
      while (!(await check())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${(await events()).map((e) => e.type).join(', ')}`);
        await sleep(50);
      }
    };

    // Killed once the first samples are processed, well before the end.
    await until(async () => /Processed \d+\/11240 windows/.test(await output()), 'the job to process its first samples', 60_000);
    expect((await events()).some((e) => e.type === 'JobFinished')).toBe(false);
    service.child.kill('SIGKILL');
    await exitOf(service.child);
    const killedAfterMs = Date.now() - started;
    expect((await events()).some((e) => e.type === 'JobFinished')).toBe(false);
    expect(await log.readStream(dspFeaturesStream(projectId, 2))).toHaveLength(0);

    // Restarted: the dead worker's job is found and retried; it runs to the end this time.
    service = await harness.start();
    const status = async () => (await call(service, 'GET', `/api/${projectId}/jobs/${jobId}/status`, { headers })).body.job as Record<string, unknown>;
    await until(async () => typeof (await status()).finishedSuccessful === 'boolean', 'the job to end', 150_000);
    const ended = await status();
    const stdout = ((await call(service, 'GET', `/api/${projectId}/jobs/${jobId}/stdout?limit=10000`, { headers })).body.stdout as { data: string }[]).map((l) => l.data).join('');
    expect(ended.finishedSuccessful, stdout).toBe(true);
    expect(stdout).toMatch(/stopped responding: no sign of life for \d+ s \(attempt 1 of 2\); retrying/);
    expect(stdout).toMatch(new RegExp(`Processed ${WINDOWS}/${WINDOWS} windows`));
    const claims = (await events()).filter((e) => e.type === 'JobStarted');
    expect(claims.map((e) => e.data.attempt)).toEqual([1, 2]);
    expect((await events()).filter((e) => e.type === 'JobFinished')).toHaveLength(1);
    // One result, from the retry, with every window.
    const results = await log.readStream(dspFeaturesStream(projectId, 2));
    expect(results).toHaveLength(1);
    expect(results[0]!.data).toMatchObject({ jobId, windowCount: WINDOWS });
    // No job of the project is left active.
    expect(((await call(service, 'GET', `/api/${projectId}/jobs`, { headers })).body.jobs as unknown[]).length).toBe(0);
    console.log(`generate-features crash: killed ${killedAfterMs} ms after the request; the retry ended ${Date.now() - started} ms after it`);
  });
});

import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { jobStream } from '../../domain/job/jobEvents';
import { kerasStream } from '../../domain/learn/kerasEvents';
import { CrashHarness, exitOf, type ServiceProcess } from '../support/serviceProcess';
import { uploadWaveSamples } from '../support/waveSamples';
import { call, signup } from '../support/testService';

// A train-keras job in a service process killed with SIGKILL mid-training: after a restart the job
// is found (its heartbeats stopped) and retried from the start, and ends with one model, the same the
// seed gives any run. Never left "running". A worker silent for 3 × 300 ms is taken for dead.
const impulse = {
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 2000, windowIncreaseMs: 100, frequencyHz: 100 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
};
const CYCLES = 40;

describe('a service process killed during a train-keras job', () => {
  const harness = new CrashHarness('edge-ml-keras-crash-', { JOB_HEARTBEAT_MS: '300' });
  afterAll(() => harness.cleanup());

  it('retries the job after a restart, which then records its model; the job never stays running', { timeout: 180_000 }, async () => {
    let service: ServiceProcess = await harness.start();
    await call(service, 'POST', '/api-user-create', { body: signup() });
    const token = String((await call(service, 'POST', '/api-login', { body: { username: 'ada', password: 'correct horse battery' } })).body.token);
    const headers = { 'x-jwt-token': token };
    const project = await call(service, 'POST', '/api/projects/create', { headers, body: { projectName: 'Crash during training' } });
    const projectId = Number(project.body.id);
    expect((await call(service, 'POST', `/api/${projectId}/impulse`, { headers, body: impulse })).status).toBe(200);
    await uploadWaveSamples(service, { id: projectId, apiKey: String(project.body.apiKey), headers }, 12, 3000);
    const log = harness.log();
    const jobEvents = async (jobId: number) => (await log.readStream(jobStream(jobId))).map((e) => ({ type: e.type, data: e.data as Record<string, unknown> }));
    const until = async (check: () => Promise<boolean>, what: string, timeoutMs: number) => {
      const end = Date.now() + timeoutMs;
      while (!(await check())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await sleep(50);
      }
    };
    const features = Number((await call(service, 'POST', `/api/${projectId}/jobs/generate-features`, { headers, body: { dspId: 2, skipFeatureExplorer: true } })).body.id);
    await until(async () => (await jobEvents(features)).some((e) => e.type === 'JobFinished'), 'the features', 90_000);
    let requested = await call(service, 'POST', `/api/${projectId}/jobs/train/keras/3`, { headers, body: { trainingCycles: CYCLES } });
    for (let i = 0; i < 50 && requested.status === 400; i++) {
      await sleep(100);
      requested = await call(service, 'POST', `/api/${projectId}/jobs/train/keras/3`, { headers, body: { trainingCycles: CYCLES } });
    }
    expect(requested.status, JSON.stringify(requested.body)).toBe(200);
    const jobId = Number(requested.body.id);
    const output = async () => (await jobEvents(jobId)).filter((e) => e.type === 'JobOutputWritten').map((e) => JSON.stringify(e.data)).join('\n');

    await until(async () => /Epoch 2\/40/.test(await output()), 'the second epoch', 60_000);
    expect((await jobEvents(jobId)).some((e) => e.type === 'JobFinished')).toBe(false);
    service.child.kill('SIGKILL');
    await exitOf(service.child);
    expect((await log.readStream(kerasStream(projectId, 3))).filter((e) => e.type === 'KerasModelTrained')).toHaveLength(0);

    service = await harness.start();
    const status = async () => (await call(service, 'GET', `/api/${projectId}/jobs/${jobId}/status`, { headers })).body.job as Record<string, unknown>;
    await until(async () => typeof (await status()).finishedSuccessful === 'boolean', 'the job to end', 150_000);
    const stdout = ((await call(service, 'GET', `/api/${projectId}/jobs/${jobId}/stdout?limit=10000`, { headers })).body.stdout as { data: string }[]).map((l) => l.data).join('');
    expect((await status()).finishedSuccessful, stdout).toBe(true);
    expect(stdout).toMatch(/stopped responding: no sign of life for \d+ s \(attempt 1 of 2\); retrying/);
    expect(stdout).toMatch(/Epoch 40\/40 - loss: /);
    expect((await jobEvents(jobId)).filter((e) => e.type === 'JobStarted').map((e) => e.data.attempt)).toEqual([1, 2]);
    const models = (await log.readStream(kerasStream(projectId, 3))).filter((e) => e.type === 'KerasModelTrained');
    expect(models).toHaveLength(1);
    expect(models[0]!.data).toMatchObject({ jobId, seed: 3 });
    expect(((await call(service, 'GET', `/api/${projectId}/jobs`, { headers })).body.jobs as unknown[]).length).toBe(0);
  });
});

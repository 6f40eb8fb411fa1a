import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { jobStream } from '../../domain/job/jobEvents';
import { tunerRunStream } from '../../domain/optimize/tunerRunEvents';
import { motionImpulse, motionRows } from '../support/projectWithFeatures';
import { CrashHarness, exitOf } from '../support/serviceProcess';
import { signedSample } from '../support/signedSample';
import { call, signup } from '../support/testService';

// The service process running a tuner run killed with SIGKILL mid-run: after a restart the
// coordinator job (its heartbeats stopped) is retried by the job workers and resumes from its run's
// stream; the trials' jobs of the dead process are retried once too. Every trial is planned and
// started once, the run completes. Trials are the TEST DOUBLE (test/support/tunerTrialDouble.ts,
// 600 ms each), run by the test entry point with TEST_TUNER_TRIAL_DOUBLE.

describe('a service process killed during a tuner run', () => {
  const harness = new CrashHarness('edge-ml-tuner-crash-', { JOB_HEARTBEAT_MS: '300', TEST_TUNER_TRIAL_DOUBLE: '600' }, { testJobRunners: true });
  afterAll(() => harness.cleanup());

  it('resumes the run after a restart, planning and starting nothing twice', { timeout: 120_000 }, async () => {
    let service = await harness.start();
    await call(service, 'POST', '/api-user-create', { body: signup() });
    const ada = { 'x-jwt-token': String((await call(service, 'POST', '/api-login', { body: { username: 'ada', password: 'correct horse battery' } })).body.token) };
    const created = await call(service, 'POST', '/api/projects/create', { headers: ada, body: { projectName: 'Tuner crash' } });
    const projectId = Number(created.body.id);
    const post = (path: string, body?: unknown) => call(service, 'POST', `/api/${projectId}${path}`, { headers: ada, ...(body === undefined ? {} : { body }) });
    expect((await post('/impulse', motionImpulse)).status).toBe(200);
    for (const label of ['idle', 'wave']) {
      const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
        method: 'POST',
        headers: { 'x-api-key': String(created.body.apiKey), 'content-type': 'application/json', 'x-file-name': `${label}.json`, 'x-label': label },
        body: signedSample('none', motionRows(label, 0), { alg: 'none' }),
      });
      expect(res.status).toBe(200);
    }
    expect((await post('/optimize/config', { targetLatency: 100, targetDevice: { name: 'cortex-m4f-80mhz', ram: 131072, rom: 1048576 }, tuningMaxTrials: 6, tuningWorkers: 2, trainingCycles: 9 })).status).toBe(200);
    // Ingestion answers on durability; the request's checks read the data summary, caught up shortly after.
    let started = await post('/jobs/optimize');
    for (let tries = 0; started.status === 400 && /training data/.test(String(started.body.error)) && tries < 50; tries++) {
      await sleep(100);
      started = await post('/jobs/optimize');
    }
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const runId = Number(started.body.id);

    const log = harness.log();
    const runEvents = async () => (await log.readStream(tunerRunStream(projectId, runId))).map((e) => ({ type: e.type, data: e.data as { trial?: number; jobId?: number; status?: string } }));
    const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 60_000) => {
      const end = Date.now() + timeoutMs;
      while (!(await check())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await runEvents())}`);
        await sleep(50);
      }
    };

    // Killed once two trials have finished and others run.
    await until(async () => (await runEvents()).filter((e) => e.type === 'TunerTrialFinished').length >= 2, 'two finished trials');
    service.child.kill('SIGKILL');
    await exitOf(service.child);
    const atKill = await runEvents();
    expect(atKill.some((e) => e.type === 'TunerRunEnded')).toBe(false);

    service = await harness.start();
    await until(async () => (await runEvents()).some((e) => e.type === 'TunerRunEnded'), 'the run to end');
    const events = await runEvents();
    const trialsOf = (type: string) => events.filter((e) => e.type === type).map((e) => e.data.trial).sort();
    expect(trialsOf('TunerTrialPlanned')).toEqual([0, 1, 2, 3, 4, 5]);
    expect(trialsOf('TunerTrialStarted')).toEqual([0, 1, 2, 3, 4, 5]);
    expect(trialsOf('TunerTrialFinished')).toEqual([0, 1, 2, 3, 4, 5]);
    expect(events.at(-1)).toMatchObject({ type: 'TunerRunEnded', data: { status: 'completed' } });
    expect(events.filter((e) => e.type === 'TunerTrialFinished').every((e) => e.data.status === 'completed')).toBe(true);

    // The coordinator was retried (attempt 2) by the restarted process; every child ran at most twice and ended.
    const coordinator = await log.readStream(jobStream(runId));
    expect(coordinator.filter((e) => e.type === 'JobStarted').map((e) => (e.data as { attempt: number }).attempt)).toEqual([1, 2]);
    for (const jobId of events.filter((e) => e.type === 'TunerTrialStarted').map((e) => e.data.jobId!)) {
      const child = await log.readStream(jobStream(jobId));
      expect(child.filter((e) => e.type === 'JobStarted').length).toBeLessThanOrEqual(2);
      await until(async () => (await log.readStream(jobStream(jobId))).some((e) => e.type === 'JobFinished'), `child ${jobId} to end`, 20_000);
    }
    const status = (await call(service, 'GET', `/api/${projectId}/jobs/${runId}/status`, { headers: ada })).body.job as Record<string, unknown>;
    for (let tries = 0; status.finishedSuccessful === undefined && tries < 100; tries++) {
      await sleep(100);
      Object.assign(status, (await call(service, 'GET', `/api/${projectId}/jobs/${runId}/status`, { headers: ada })).body.job);
    }
    expect(status.finishedSuccessful).toBe(true);
  });
});

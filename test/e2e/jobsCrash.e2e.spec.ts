import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { IdAllocator } from '../../commands/idAllocator';
import { requestJob } from '../../commands/jobs/requestJob';
import { jobStream } from '../../domain/job/jobEvents';
import { CrashHarness, exitOf } from '../support/serviceProcess';
import { call, signup } from '../support/testService';

// A worker process killed with SIGKILL in the middle of a job: after a restart the job is found
// (its heartbeats stopped) and retried once; killed again during the retry, it ends as failed with
// the reason. Never "running" for good. The service runs as a child process on the embedded SQLite
// log, with the test-only job runners (test/support/testServiceMain.ts) and short heartbeats (a
// worker silent for 3 x 300 ms is taken for dead).

describe('a job worker process killed during a job', () => {
  const harness = new CrashHarness('edge-ml-jobs-crash-', { JOB_HEARTBEAT_MS: '300' }, { testJobRunners: true });
  afterAll(() => harness.cleanup());

  it('is retried once after a restart, and fails with the reason when killed again', { timeout: 90_000 }, async () => {
    let service = await harness.start();
    await call(service, 'POST', '/api-user-create', { body: signup() });
    const token = String((await call(service, 'POST', '/api-login', { body: { username: 'ada', password: 'correct horse battery' } })).body.token);
    const projectId = Number((await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Crash' } })).body.id);

    // The job is requested through the log itself (another connection to the same SQLite file), as
    // the generate-features endpoint of another process would: ids come from the shared hi/lo sequence.
    const log = harness.log();
    const { jobId } = await requestJob(
      { events: log, ids: new IdAllocator(log), projects: { byId: async () => ({ settings: {} }) } },
      { projectId, category: 'Crash test', categoryKey: 'test-lines', key: 'crash', parameters: { lines: 100, delayMs: 50 }, notificationList: null, createdByUserId: null },
      { actor: 'system:test', correlationId: 'crash', now: new Date() },
    );
    const events = async () => (await log.readStream(jobStream(jobId))).map((e) => ({ type: e.type, data: e.data as Record<string, unknown> }));
    const status = async () => (await call(service, 'GET', `/api/${projectId}/jobs/${jobId}/status`, { headers: { 'x-jwt-token': token } })).body.job as Record<string, unknown>;
    const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 20_000) => {
      const end = Date.now() + timeoutMs;
      while (!(await check())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await events())}`);
        await sleep(50);
      }
    };
    const outputOfAttempt = async (attempt: number) => {
      const all = await events();
      const from = all.findIndex((e) => e.type === 'JobStarted' && e.data.attempt === attempt);
      return from < 0 ? 0 : all.slice(from).filter((e) => e.type === 'JobOutputWritten').length;
    };

    // Attempt 1 writes output; the process is killed in the middle.
    await until(async () => (await outputOfAttempt(1)) >= 2, 'output of attempt 1');
    service.child.kill('SIGKILL');
    await exitOf(service.child);
    expect((await events()).some((e) => e.type === 'JobFinished')).toBe(false);

    // Restarted: the job of the dead worker is found and retried, by the new process.
    service = await harness.start();
    await until(async () => (await outputOfAttempt(2)) >= 2, 'the retry (attempt 2) to write output');
    const claims = (await events()).filter((e) => e.type === 'JobStarted').map((e) => e.data);
    expect(claims).toHaveLength(2);
    expect(claims[1]!.workerId).not.toBe(claims[0]!.workerId);
    expect(await status()).toMatchObject({ id: jobId });
    expect(await status()).not.toHaveProperty('finishedSuccessful');

    // Killed again during the retry: after the next restart the job ends as failed, with the reason.
    service.child.kill('SIGKILL');
    await exitOf(service.child);
    service = await harness.start();
    await until(async () => typeof (await status()).finishedSuccessful === 'boolean', 'the job to end');
    const ended = await status();
    expect(ended).toMatchObject({ finishedSuccessful: false, additionalInfo: expect.stringMatching(/^Worker \S+ stopped responding: no sign of life for \d+ s \(attempt 2 of 2\)$/) });
    const all = await events();
    expect(all.filter((e) => e.type === 'JobStarted')).toHaveLength(2);
    expect(all.filter((e) => e.type === 'JobFinished')).toHaveLength(1);
    const stdout = (await call(service, 'GET', `/api/${projectId}/jobs/${jobId}/stdout?logLevel=warn`, { headers: { 'x-jwt-token': token } })).body.stdout as { data: string }[];
    expect(stdout.map((l) => l.data)).toEqual([expect.stringMatching(/attempt 1 of 2\); retrying\n$/), expect.stringMatching(/attempt 2 of 2\); the job failed\n$/)]);
  });
});

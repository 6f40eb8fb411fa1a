import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IdAllocator } from '../../commands/idAllocator';
import type { JobRunner } from '../../commands/jobs/jobRunners';
import { requestJob } from '../../commands/jobs/requestJob';
import { jobStream, type JobFinished } from '../../domain/job/jobEvents';
import { dspFeaturesStream } from '../../domain/dsp/dspFeaturesEvents';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import { readModelsCaughtUp } from '../support/readModels';
import { signedSample } from '../support/signedSample';
import { linesRunner, withTestJobRunners } from '../support/testJobRunners';
import { adaWithProject, call, describeOn, setups, startTestService, type TestService } from '../support/testService';


// A project deleted while one of its jobs runs leaves no job running: whatever the job, it ends
// failed, saying why, within a few seconds, and records no result.
const impulse = {
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 500, windowIncreaseMs: 20, frequencyHz: 100 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral', title: 'Spectral Analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 }],
  learnBlocks: [],
};
const rows = (f: number, n: number) => Array.from({ length: n }, (_, i) => [Math.sin((2 * Math.PI * f * i) / 100), Math.cos((2 * Math.PI * f * i) / 100)]);
/** A kind of job no worker can run until a test registers its runner. */
const LATE = 'test-late-runner';
/** How soon after the deletion the job must have ended. */
const ENDS_WITHIN_MS = 5000;

for (const setup of setups) {
  describeOn(setup, "a deleted project's jobs", () => {
    let service: TestService;
    /** The worker's runners, kept to give it LATE's later. */
    let runners: Map<string, JobRunner>;

    beforeAll(async () => {
      // Workers look for waiting jobs every heartbeat.
      service = await startTestService({ mongo: setup.mongo, env: { JOB_HEARTBEAT_MS: '300' }, jobRunners: (stores) => (runners = withTestJobRunners(stores)) });
    });
    afterAll(async () => {
      await service?.destroy();
    });

    /** A project of Ada's, with `samples` samples of `rowsEach` rows when asked. */
    async function project(name: string, samples = 0, rowsEach = 0) {
      const { ada, projectId, apiKey } = await adaWithProject(service, name);
      for (let i = 0; i < samples; i++) {
        const label = i % 2 === 0 ? 'idle' : 'wave';
        const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': `${label}.${i}.json`, 'x-label': label },
          body: signedSample('none', rows(1 + (i % 9), rowsEach), { alg: 'none' }),
        });
        expect(res.status).toBe(200);
      }
      await readModelsCaughtUp(service);
      return { ada, projectId };
    }
    const output = async (jobId: number) => (await service.stores.events.readStream(jobStream(jobId))).filter((e) => e.type === 'JobOutputWritten').length;
    const ended = async (jobId: number) => (await service.stores.events.readStream(jobStream(jobId))).find((e) => e.type === 'JobFinished') as JobFinished | undefined;
    /** Deletes the project once the job wrote its first output, and answers how the job ended. */
    async function deleteDuring(ada: Record<string, string>, projectId: number, jobId: number): Promise<JobFinished['data']> {
      const started = Date.now() + 60_000;
      while ((await output(jobId)) === 0) {
        if (Date.now() > started) throw new Error(`job ${jobId} wrote nothing`);
        await sleep(20);
      }
      expect(await ended(jobId), 'the job ended before the project was deleted: make it longer').toBeUndefined();
      expect((await call(service, 'DELETE', `/api/${projectId}`, { headers: ada })).status).toBe(200);
      const until = Date.now() + ENDS_WITHIN_MS;
      while (!(await ended(jobId))) {
        if (Date.now() > until) throw new Error(`the job of deleted project ${projectId} still runs ${ENDS_WITHIN_MS} ms after the deletion`);
        await sleep(50);
      }
      return (await ended(jobId))!.data;
    }

    it('stops a generate-features job, which ends failed saying why and records no features', async () => {
      const { ada, projectId } = await project('Features', 24, 3000);
      expect((await call(service, 'POST', `/api/${projectId}/impulse`, { headers: ada, body: impulse })).status).toBe(200);
      const res = await call(service, 'POST', `/api/${projectId}/jobs/generate-features`, { headers: ada, body: { dspId: 2, skipFeatureExplorer: true } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const end = await deleteDuring(ada, projectId, Number(res.body.id));
      expect(end).toMatchObject({ finishedSuccessful: false, reason: expect.stringMatching(/project was deleted/) });
      expect(await service.stores.events.readStream(dspFeaturesStream(projectId, 2))).toEqual([]);
    }, 120_000);

    it('stops any other job of the project the same way (the worker stops it, whatever its runner)', async () => {
      const { ada, projectId } = await project('Any');
      const end = await deleteDuring(ada, projectId, await requestTestJob(projectId));
      expect(end).toMatchObject({ finishedSuccessful: false, reason: expect.stringMatching(/project was deleted/) });
    }, 60_000);

    it('ends a job of a deleted project that a worker claims only after the deletion, without running it', async () => {
      const { ada, projectId } = await project('Late');
      const jobId = await requestTestJob(projectId, LATE);
      expect((await call(service, 'DELETE', `/api/${projectId}`, { headers: ada })).status).toBe(200);
      await service.projections!.waitFor((await service.stores.events.headPosition())!, 5000);
      // A worker that can run it appears: it claims the waiting job and ends it at once.
      runners.set(LATE, linesRunner);
      const until = Date.now() + 10_000;
      while (!(await ended(jobId))) {
        if (Date.now() > until) throw new Error('the waiting job of the deleted project was not ended');
        await sleep(50);
      }
      expect((await ended(jobId))!.data).toMatchObject({ finishedSuccessful: false, reason: expect.stringMatching(/project was deleted/) });
      expect(await output(jobId)).toBe(0);
    }, 60_000);

    /** A `test-lines` job of a minute (or a job of `categoryKey`), requested as the job endpoints do. */
    async function requestTestJob(projectId: number, categoryKey = 'test-lines'): Promise<number> {
      const deps = { events: service.stores.events, ids: new IdAllocator(service.stores.events), projects: new ProjectQueries(service.stores.readStore) };
      const { jobId, position } = await requestJob(
        deps,
        { projectId, category: 'Test job', categoryKey, key: 'k', parameters: { lines: 600, delayMs: 100 }, notificationList: null, createdByUserId: null },
        { actor: 'system:test', correlationId: 'test', now: new Date() },
      );
      await service.projections!.waitFor(position, 5000);
      return jobId;
    }
  });
}

import { setTimeout as sleep } from 'node:timers/promises';
import { EdgeImpulseApi } from 'edge-impulse-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdAllocator } from '../../commands/idAllocator';
import { requestJob } from '../../commands/jobs/requestJob';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import { withTestJobRunners } from '../support/testJobRunners';
import { registerUser, startTestService, type TestService } from '../support/testService';


// The official SDK's JobsApi, unmodified, reading our answers. Jobs are requested through
// requestJob (the generate-features endpoint, which will request them over HTTP, is not here yet)
// and run by the service's worker with test-only runners.
describe('the official SDK jobs namespace against the service', () => {
  let service: TestService;
  let api: EdgeImpulseApi;
  let projectId: number;
  let userId: number;

  const request = async (categoryKey: string, parameters: Record<string, unknown>, key = 'sdk'): Promise<number> => {
    const { jobId, position } = await requestJob(
      { events: service.stores.events, ids: new IdAllocator(service.stores.events), projects: new ProjectQueries(service.stores.readStore) },
      { projectId, category: 'SDK test', categoryKey, key, parameters, notificationList: 'dsp', createdByUserId: userId },
      { actor: `user:${userId}`, correlationId: 'sdk', now: new Date() },
    );
    await service.projections!.waitFor(position, 5000);
    return jobId;
  };
  const untilFinished = async (jobId: number) => {
    const end = Date.now() + 10_000;
    for (;;) {
      const { job } = await api.jobs.getJobStatus(projectId, jobId);
      if (job.finishedSuccessful !== undefined) return job;
      if (Date.now() > end) throw new Error(`job ${jobId} did not finish`);
      await sleep(50);
    }
  };

  beforeAll(async () => {
    service = await startTestService({ mongo: false, jobRunners: withTestJobRunners });
    const user = await registerUser(service);
    userId = user.id;
    api = new EdgeImpulseApi({ endpoint: service.apiUrl });
    await api.authenticate({ method: 'jwtToken', jwtToken: user.token });
    projectId = (await api.projects.createProject({ projectName: 'Jobs' })).id;
    await api.projects.updateProject(projectId, { dspJobNotificationUids: [userId] });
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('follows a job to its end with getJobStatus, reads its logs and finds it in listAllJobs', async () => {
    const jobId = await request('test-lines', { lines: 4, level: 'info' }, 'dsp-3');
    const job = await untilFinished(jobId);
    expect(job).toMatchObject({ id: jobId, category: 'SDK test', categoryKey: 'test-lines', key: 'dsp-3', finishedSuccessful: true, jobNotificationUids: [userId], createdByUser: { id: userId, username: 'ada' } });
    expect(job.created).toBeInstanceOf(Date);
    expect(job.started).toBeInstanceOf(Date);
    expect(job.finished).toBeInstanceOf(Date);
    expect(typeof job.computeTime).toBe('number');

    const logs = await api.jobs.getJobsLogs(projectId, jobId, { limit: 3 });
    expect(logs.totalCount).toBe(4);
    expect(logs.stdout.map((l) => l.data)).toEqual(['line 2\n', 'line 3\n', 'line 4\n']);
    expect(logs.stdout[0]!.created).toBeInstanceOf(Date);
    expect(await api.jobs.downloadJobsLogs(projectId, jobId)).toBe('line 1\nline 2\nline 3\nline 4\n');

    const all = await api.jobs.listAllJobs(projectId, { key: 'dsp-3', finished: 'successful', limit: 10 });
    expect(all.totalJobCount).toBe(1);
    expect(all.jobs.map((j) => j.id)).toEqual([jobId]);
    const history = await api.jobs.listFinishedJobs(projectId, { startDate: new Date(Date.now() - 60_000), endDate: new Date(Date.now() + 60_000) });
    expect(history.jobs.map((j) => j.id)).toContain(jobId);
  });

  it('cancels a running job and sees it end not successful; a failed job throws nothing but reports false', async () => {
    const jobId = await request('test-lines', { lines: 1000, delayMs: 20 });
    const end = Date.now() + 10_000;
    while ((await api.jobs.listActiveJobs(projectId)).jobs.every((j) => j.id !== jobId || j.started === undefined) && Date.now() < end) await sleep(20);
    await api.jobs.cancelJob(projectId, jobId);
    expect(await untilFinished(jobId)).toMatchObject({ finishedSuccessful: false, additionalInfo: 'Cancelled' });
    await expect(api.jobs.cancelJob(projectId, jobId, { forceCancel: 'true' })).rejects.toThrow(/already finished/);

    const failing = await request('test-lines', { lines: 1, failWith: 'Sample 3 is too short' });
    expect(await untilFinished(failing)).toMatchObject({ finishedSuccessful: false, additionalInfo: 'Sample 3 is too short' });
  });

  it('updates who is notified and surfaces an unknown job as a thrown error', async () => {
    const jobId = await request('no-runner-here', {});
    await api.jobs.updateJob(projectId, jobId, { jobNotificationUids: [] });
    expect((await api.jobs.getJobStatus(projectId, jobId)).job.jobNotificationUids).toEqual([]);
    await api.jobs.cancelJob(projectId, jobId, { forceCancel: 'true' });
    await expect(api.jobs.getJobStatus(projectId, 987654)).rejects.toThrow(/Job 987654 not found/);
  });
});

import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IdAllocator } from '../../commands/idAllocator';
import { runJobCommand } from '../../commands/jobs/jobCommands';
import { jobNotificationSaga } from '../../commands/jobs/jobNotificationSaga';
import { requestJob, type RequestJobInput } from '../../commands/jobs/requestJob';
import { jobStream } from '../../domain/job/jobEvents';
import { EmailQueries } from '../../projections/emails/emailQueries';
import { JobQueries } from '../../projections/jobs/jobQueries';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import { withTestJobRunners } from '../support/testJobRunners';
import { adaAndBob, call, describeOn, setups, startTestService, type TestService } from '../support/testService';


/** Fields of the SDK's Job that every record carries. */
const REQUIRED_JOB_FIELDS = ['id', 'category', 'categoryKey', 'key', 'created', 'jobNotificationUids'];

for (const setup of setups) {
  describeOn(setup, 'jobs over HTTP', () => {
    let service: TestService;
    let ada: string;
    let adaId: number;
    let bobId: number;
    let projectId: number;
    let otherProjectId: number;
    let adminKey: string;
    let readonlyKey: string;

    const jwt = (token: string) => ({ 'x-jwt-token': token });
    const get = (path: string, headers: Record<string, string> = jwt(ada)) => call(service, 'GET', `/api/${projectId}${path}`, { headers });
    const post = (path: string, body?: unknown, headers: Record<string, string> = jwt(ada)) => call(service, 'POST', `/api/${projectId}${path}`, { headers, ...(body === undefined ? {} : { body }) });

    /** Requests a job the way the generate-features endpoint will, and waits until the read model has it. */
    async function request(input: Partial<RequestJobInput> & { categoryKey: string }, inProject = projectId): Promise<number> {
      const deps = { events: service.stores.events, ids: new IdAllocator(service.stores.events), projects: new ProjectQueries(service.stores.readStore) };
      const { jobId, position } = await requestJob(
        deps,
        { projectId: inProject, category: 'Test job', key: 'k', parameters: {}, notificationList: null, createdByUserId: adaId, ...input },
        { actor: `user:${adaId}`, correlationId: 'test', now: new Date() },
      );
      await service.projections!.waitFor(position, 5000);
      return jobId;
    }

    async function job(jobId: number, inProject = projectId): Promise<Record<string, unknown>> {
      const res = await call(service, 'GET', `/api/${inProject}/jobs/${jobId}/status`, { headers: jwt(ada) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.job as Record<string, unknown>;
    }

    async function finished(jobId: number, timeoutMs = 10_000): Promise<Record<string, unknown>> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const j = await job(jobId);
        if (typeof j.finishedSuccessful === 'boolean') return j;
        if (Date.now() > until) throw new Error(`job ${jobId} did not finish in ${timeoutMs} ms: ${JSON.stringify(j)}`);
        await sleep(50);
      }
    }

    async function startedRunning(jobId: number): Promise<void> {
      const until = Date.now() + 10_000;
      while ((await get(`/jobs/${jobId}/stdout`)).body.totalCount === 0) {
        if (Date.now() > until) throw new Error(`job ${jobId} wrote nothing`);
        await sleep(25);
      }
    }

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo, env: { JOB_HEARTBEAT_MS: '500' }, jobRunners: withTestJobRunners });
      const users = await adaAndBob(service);
      ({ adaId, bobId, ada } = users);
      const bob = users.bob;
      const project = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada), body: { projectName: 'Jobs' } });
      projectId = Number(project.body.id);
      adminKey = String(project.body.apiKey);
      const ro = await post('/apikeys', { name: 'reader', role: 'readonly' });
      readonlyKey = String(ro.body.apiKey);
      expect(readonlyKey).toMatch(/^ei_/);
      otherProjectId = Number((await call(service, 'POST', '/api/projects/create', { headers: jwt(bob), body: { projectName: 'Bob jobs' } })).body.id);
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('runs a requested job to success and shows its record, output and download', async () => {
      const jobId = await request({ categoryKey: 'test-lines', parameters: { lines: 3 }, category: 'Generate features', key: '12' });
      const j = await finished(jobId);
      for (const f of REQUIRED_JOB_FIELDS) expect(j, f).toHaveProperty(f);
      expect(j).toMatchObject({
        id: jobId,
        category: 'Generate features',
        categoryKey: 'test-lines',
        key: '12',
        finishedSuccessful: true,
        jobNotificationUids: [],
        computeTime: expect.any(Number),
        categoryCount: 1,
        createdByUser: { id: adaId, name: 'Ada Lovelace', username: 'ada', photo: '' },
        metadata: {},
      });
      expect(Date.parse(String(j.created))).toBeLessThanOrEqual(Date.parse(String(j.started)));
      expect(Date.parse(String(j.started))).toBeLessThanOrEqual(Date.parse(String(j.finished)));
      expect(j).not.toHaveProperty('additionalInfo');

      const stdout = await get(`/jobs/${jobId}/stdout`);
      expect(stdout.status).toBe(200);
      expect(stdout.body.totalCount).toBe(3);
      expect((stdout.body.stdout as { data: string; logLevel: string; created: string }[]).map((l) => [l.data, l.logLevel])).toEqual([
        ['line 1\n', 'info'],
        ['line 2\n', 'info'],
        ['line 3\n', 'info'],
      ]);
      const download = await fetch(`${service.apiUrl}/v1/api/${projectId}/jobs/${jobId}/stdout/download`, { headers: jwt(ada) });
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await download.text()).toBe('line 1\nline 2\nline 3\n');
      const last = await fetch(`${service.apiUrl}/v1/api/${projectId}/jobs/${jobId}/stdout/download?limit=1`, { headers: jwt(ada) });
      expect(await last.text()).toBe('line 3\n');
    });

    it('records a failed job with its reason, its error as the last output line', async () => {
      const jobId = await request({ categoryKey: 'test-lines', parameters: { lines: 1, failWith: 'The window is longer than the sample' } });
      const j = await finished(jobId);
      expect(j).toMatchObject({ finishedSuccessful: false, additionalInfo: 'The window is longer than the sample' });
      const errors = await get(`/jobs/${jobId}/stdout?logLevel=error`);
      expect(errors.body).toMatchObject({ totalCount: 1, stdout: [{ data: 'Job failed: The window is longer than the sample\n', logLevel: 'error' }] });
    });

    it('runs CPU-bound work of a job in a pool thread, not on the event loop', async () => {
      const jobId = await request({ categoryKey: 'test-cpu', parameters: { ms: 300 } });
      expect(await finished(jobId)).toMatchObject({ finishedSuccessful: true });
      const lines = (await get(`/jobs/${jobId}/stdout`)).body.stdout as { data: string }[];
      const thread = Number(/spun on thread (\d+)/.exec(lines.at(-1)!.data)?.[1]);
      expect(thread).toBeGreaterThan(0); // the main thread is 0
    });

    it('lists a running job as active, stops it within a second of a cancel, and ends it not successful', async () => {
      const jobId = await request({ categoryKey: 'test-lines', parameters: { lines: 1000, delayMs: 20 } });
      await startedRunning(jobId);
      const active = await get('/jobs');
      expect(active.status).toBe(200);
      expect((active.body.jobs as { id: number }[]).map((x) => x.id)).toContain(jobId);
      expect((active.body.jobs as Record<string, unknown>[]).find((x) => x.id === jobId)).not.toHaveProperty('finishedSuccessful');
      const asked = Date.now();
      const res = await post(`/jobs/${jobId}/cancel`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      const j = await finished(jobId, 3000);
      expect(Date.now() - asked).toBeLessThan(1500);
      expect(j).toMatchObject({ finishedSuccessful: false, additionalInfo: 'Cancelled' });
      expect((await get('/jobs')).body.jobs as unknown[]).not.toContainEqual(expect.objectContaining({ id: jobId }));
      // Asking again: it has ended.
      expect((await post(`/jobs/${jobId}/cancel`)).status).toBe(409);
    });

    it('ends a job at once with forceCancel, even when its runner does not listen', async () => {
      const jobId = await request({ categoryKey: 'test-stubborn', parameters: { ms: 3000 } });
      await startedRunning(jobId);
      const res = await post(`/jobs/${jobId}/cancel?forceCancel=true`);
      expect(res.status).toBe(200);
      // The answer waited for the read model: the job is ended as the response arrives.
      expect(await job(jobId)).toMatchObject({ finishedSuccessful: false, additionalInfo: 'Cancelled (forced)' });
      await sleep(3200);
      // The runner's late end was refused: the record is unchanged.
      expect(await job(jobId)).toMatchObject({ finishedSuccessful: false, additionalInfo: 'Cancelled (forced)' });
    });

    it('filters, pages and counts every job; history holds finished jobs only', async () => {
      const a = await request({ categoryKey: 'test-lines', category: 'Alpha', key: 'a1' });
      const b = await request({ categoryKey: 'test-lines', category: 'Alpha', key: 'b1', parameters: { failWith: 'no' } });
      await finished(a);
      await finished(b);
      const waiting = await request({ categoryKey: 'no-runner-here', category: 'Beta', key: 'w' });
      const all = await get('/jobs/all?limit=2&offset=0');
      expect(all.status).toBe(200);
      const total = Number(all.body.totalJobCount);
      expect((all.body.jobs as unknown[]).length).toBe(2);
      expect((all.body.jobs as { id: number }[])[0]!.id).toBe(waiting); // newest first
      const page2 = await get(`/jobs/all?limit=2&offset=${total - 1}`);
      expect((page2.body.jobs as unknown[]).length).toBe(1);
      expect(page2.body.totalJobCount).toBe(total);
      expect(((await get('/jobs/all?category=Alpha')).body.jobs as { id: number }[]).map((x) => x.id)).toEqual([b, a]);
      expect(((await get('/jobs/all?key=b1')).body.jobs as { id: number }[]).map((x) => x.id)).toEqual([b]);
      expect(((await get('/jobs/all?category=Alpha&finished=successful')).body.jobs as { id: number }[]).map((x) => x.id)).toEqual([a]);
      expect(((await get('/jobs/all?category=Alpha&finished=failed')).body.jobs as { id: number }[]).map((x) => x.id)).toEqual([b]);
      expect(((await get('/jobs/all?category=Beta&finished=all')).body.jobs as unknown[]).length).toBe(0);
      expect(((await get('/jobs/all?category=Beta')).body.jobs as { id: number }[]).map((x) => x.id)).toEqual([waiting]);
      const history = await get('/jobs/history?limit=100');
      expect((history.body.jobs as { id: number }[]).map((x) => x.id)).not.toContain(waiting);
      expect((history.body.jobs as { id: number }[]).map((x) => x.id)).toEqual(expect.arrayContaining([a, b]));
      const future = new Date(Date.now() + 3600_000).toISOString();
      expect((await get(`/jobs/history?startDate=${future}`)).body).toMatchObject({ jobs: [], totalJobCount: 0 });
      expect((await get(`/jobs/all?endDate=${new Date(0).toISOString()}`)).body).toMatchObject({ jobs: [], totalJobCount: 0 });
      // A job no worker here has a runner for stays requested: listed as active, never started.
      expect(await job(waiting)).not.toHaveProperty('started');
    });

    it('answers the last lines of the output at a level, with the count of all that match', async () => {
      const jobId = await request({ categoryKey: 'test-lines', parameters: { lines: 5, level: 'warn' } });
      await finished(jobId);
      const res = await get(`/jobs/${jobId}/stdout?limit=2`);
      expect(res.body).toMatchObject({ totalCount: 5, stdout: [{ data: 'line 4\n' }, { data: 'line 5\n' }] });
      expect((await get(`/jobs/${jobId}/stdout?logLevel=error`)).body).toMatchObject({ totalCount: 0, stdout: [] });
      expect((await get(`/jobs/${jobId}/stdout?logLevel=info`)).body.totalCount).toBe(5);
    });

    it('refuses bad query parameters and ids with 400 naming them, unknown jobs with 404', async () => {
      const cases: [string, RegExp][] = [
        ['/jobs/all?limit=0', /"limit"/],
        ['/jobs/all?limit=ten', /"limit"/],
        ['/jobs/all?finished=maybe', /"finished"/],
        ['/jobs/history?startDate=yesterday', /"startDate"/],
        ['/jobs/all?rootOnly=perhaps', /"rootOnly"/],
        ['/jobs/1/stdout?logLevel=verbose', /"logLevel"/],
        ['/jobs/abc/status', /"jobId"/],
      ];
      for (const [path, message] of cases) {
        const res = await get(path);
        expect(res.status, path).toBe(400);
        expect(String(res.body.error), path).toMatch(message);
      }
      const missing = await get('/jobs/999999/status');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ success: false, error: `Job 999999 not found in project ${projectId}` });
      expect((await post('/jobs/1/cancel?forceCancel=yes')).status).toBe(400);
    });

    it("answers 404 for a job of another project, through every endpoint", async () => {
      const theirs = await request({ categoryKey: 'no-runner-here' }, otherProjectId);
      for (const path of [`/jobs/${theirs}/status`, `/jobs/${theirs}/stdout`, `/jobs/${theirs}/stdout/download`]) {
        expect((await get(path)).status, path).toBe(404);
      }
      expect((await post(`/jobs/${theirs}/cancel?forceCancel=true`)).status).toBe(404);
      expect((await post(`/jobs/${theirs}/update`, { jobNotificationUids: [adaId] })).status).toBe(404);
      // It was not touched.
      const record = await new JobQueries(service.stores.readStore).byId(theirs);
      expect(record).toMatchObject({ state: 'requested', cancelRequested: false, jobNotificationUids: [] });
    });

    it('lets a read-only key read jobs but not cancel or update them; an admin key may', async () => {
      const jobId = await request({ categoryKey: 'no-runner-here' });
      const ro = { 'x-api-key': readonlyKey };
      expect((await get('/jobs/all', ro)).status).toBe(200);
      expect((await get(`/jobs/${jobId}/status`, ro)).status).toBe(200);
      expect((await get(`/jobs/${jobId}/stdout`, ro)).status).toBe(200);
      expect((await post(`/jobs/${jobId}/cancel`, undefined, ro)).status).toBe(403);
      expect((await post(`/jobs/${jobId}/update`, { jobNotificationUids: [adaId] }, ro)).status).toBe(403);
      const res = await post(`/jobs/${jobId}/cancel`, undefined, { 'x-api-key': adminKey });
      expect(res.status).toBe(200);
      expect(await job(jobId)).toMatchObject({ finishedSuccessful: false, additionalInfo: 'Cancelled before it started' });
    });

    it('updates who is notified; a bad list is refused with 400 and changes nothing', async () => {
      const jobId = await request({ categoryKey: 'no-runner-here' });
      const bad = await post(`/jobs/${jobId}/update`, { jobNotificationUids: [0] });
      expect(bad.status).toBe(400);
      expect(String(bad.body.error)).toMatch(/jobNotificationUids/);
      expect((await post(`/jobs/${jobId}/update`, { jobNotificationUids: 'all' })).status).toBe(400);
      expect(await job(jobId)).toMatchObject({ jobNotificationUids: [] });
      const res = await post(`/jobs/${jobId}/update`, { jobNotificationUids: [adaId] });
      expect(res.status).toBe(200);
      expect(await job(jobId)).toMatchObject({ jobNotificationUids: [adaId] });
    });

    it("refuses anyone but the project's collaborators in a job's notification list, whatever the credential", async () => {
      const jobId = await request({ categoryKey: 'no-runner-here' });
      for (const headers of [jwt(ada), { 'x-api-key': adminKey }]) {
        const res = await post(`/jobs/${jobId}/update`, { jobNotificationUids: [adaId, bobId] }, headers);
        expect(res.status).toBe(400);
        expect(res.body.error).toBe(`"jobNotificationUids": user ${bobId} is not a collaborator on this project`);
        // An id nobody has gets the same answer: the list tells nothing about who has an account.
        const unknown = await post(`/jobs/${jobId}/update`, { jobNotificationUids: [987654] }, headers);
        expect(unknown.status).toBe(400);
        expect(unknown.body.error).toBe('"jobNotificationUids": user 987654 is not a collaborator on this project');
      }
      expect(await job(jobId)).toMatchObject({ jobNotificationUids: [] });
    });

    it('e-mails nobody who left the project by the time the job ends, and the history shows no address', async () => {
      // Listed while allowed (as a collaborator who then leaves would be), e-mailed never.
      const jobId = await request({ categoryKey: 'test-lines', parameters: { lines: 2, delayMs: 400 } });
      const ctx = { actor: `user:${adaId}`, correlationId: 'test', now: new Date() };
      await runJobCommand(service.stores.events, { type: 'UpdateJobNotifications', data: { jobId, jobNotificationUids: [adaId, bobId], allowedUids: [adaId, bobId] } }, ctx);
      await finished(jobId);
      const emails = new EmailQueries(service.stores.readStore);
      const about = async (userId: number) => (await emails.forUser(userId)).filter((e) => String(e.subject).startsWith(`Job ${jobId} `));
      const until = Date.now() + 10_000;
      while ((await about(adaId)).length === 0 && Date.now() < until) await sleep(50);
      expect(await about(adaId)).toHaveLength(1);
      expect(await about(bobId)).toEqual([]);
      // The project's readers see that an e-mail went out, never to which address.
      // The history is a read model of its own: it may come a moment after the e-mails' one.
      const queuedInHistory = async () => {
        const history = await get('/history?type=EmailQueued&limit=1000', { 'x-api-key': adminKey });
        expect(history.status).toBe(200);
        return { history, queued: (history.body.events as { data: Record<string, unknown> }[]).filter((e) => String(e.data.subject).startsWith(`Job ${jobId} `)) };
      };
      let { history, queued } = await queuedInHistory();
      while (queued.length === 0 && Date.now() < until) ({ history, queued } = await queuedInHistory());
      expect(queued).toHaveLength(1);
      expect(queued[0]!.data.to).toBe('[redacted]');
      expect(JSON.stringify(history.body)).not.toMatch(/@example\.com/);
    });

    it("copies the project's DSP notification list into a DSP job and e-mails them when it ends, once", async () => {
      expect((await call(service, 'POST', `/api/${projectId}`, { headers: jwt(ada), body: { dspJobNotificationUids: [adaId] } })).status).toBe(200);
      const jobId = await request({ categoryKey: 'test-lines', notificationList: 'dsp', category: 'Generate features' });
      expect(await finished(jobId)).toMatchObject({ finishedSuccessful: true, jobNotificationUids: [adaId] });
      const emails = new EmailQueries(service.stores.readStore);
      const mine = async () => (await emails.forUser(adaId)).filter((e) => String(e.subject).startsWith(`Job ${jobId} `));
      const until = Date.now() + 10_000;
      while ((await mine()).length === 0 && Date.now() < until) await sleep(50);
      const [email, ...more] = await mine();
      expect(more).toEqual([]);
      expect(email).toMatchObject({ to: 'ada@example.com', subject: `Job ${jobId} (Generate features) finished successfully` });
      // The saga sees the end again (a restart before its checkpoint): no second e-mail.
      const end = (await service.stores.events.readStream(jobStream(jobId))).find((e) => e.type === 'JobFinished')!;
      const saga = jobNotificationSaga({
        events: service.stores.events,
        ids: new IdAllocator(service.stores.events),
        recipient: async () => ({ email: 'ada@example.com', name: 'Ada' }),
        mailFrom: 'no-reply@localhost.localdomain',
        log: pino({ level: 'silent' }),
      });
      const headBefore = await service.stores.events.headPosition();
      await saga.react(end);
      expect(await service.stores.events.headPosition()).toBe(headBefore);
      expect(await mine()).toHaveLength(1);
    });

    it("counts the month's compute time of finished jobs in project information", async () => {
      const info = await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada) });
      const jobs = await new JobQueries(service.stores.readStore).list({ projectId }, { finished: 'all' });
      const sum = jobs.jobs.reduce((n, j) => n + j.computeTimeMs, 0);
      expect(sum).toBeGreaterThan(0);
      expect((info.body.computeTime as { timeUsedMs: number }).timeUsedMs).toBe(sum);
    });
  });
}

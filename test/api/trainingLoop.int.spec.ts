import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EmailQueries } from '../../projections/emails/emailQueries';
import { JobQueries } from '../../projections/jobs/jobQueries';
import { jobFinished } from '../support/jobStatus';
import { ingestSample, motionImpulse } from '../support/projectWithFeatures';
import { call, describeOn, loginToken, registerUser, setups, startTestService, type TestService } from '../support/testService';

// Training jobs are jobs like the others: their compute time counts in the project's, and the
// project's trainJobNotificationUids (collaborators only) are e-mailed when one ends.
const impulse = { ...motionImpulse, dspBlocks: [{ id: 2, type: 'flatten', name: 'Flatten', title: 'Flatten', axes: ['accX', 'accY'], input: 1, implementationVersion: 1 }] };
const rows = (f: number) => Array.from({ length: 200 }, (_, i) => [Math.sin((2 * Math.PI * f * i) / 100), Math.cos((2 * Math.PI * f * i) / 100)]);

for (const setup of setups) {
  describeOn(setup, 'training jobs as jobs: compute time and notifications', () => {
    let service: TestService;
    let ada: { id: number; token: string };
    let bob: { id: number; token: string };
    let carol: { id: number; token: string };
    let projectId: number;
    const jwt = (token: string) => ({ 'x-jwt-token': token });
    const post = (path: string, body: unknown = {}) => call(service, 'POST', `/api/${projectId}${path}`, { headers: jwt(ada.token), body });
    const get = (path: string) => call(service, 'GET', `/api/${projectId}${path}`, { headers: jwt(ada.token) });
    const finished = (jobId: number) => jobFinished<{ finishedSuccessful?: boolean; jobNotificationUids: number[]; computeTimeMs?: number }>(service, get, jobId);
    const run = async (path: string, body: unknown) => {
      const res = await post(path, body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const jobId = Number(res.body.id);
      return { jobId, job: await finished(jobId) };
    };
    /** E-mails about job `jobId` in a user's outbox, once the e-mail saga and its read model had a moment. */
    const emailsAbout = async (userId: number, jobId: number, expected: number) => {
      const emails = new EmailQueries(service.stores.readStore);
      const about = async () => (await emails.forUser(userId)).filter((e) => String(e.subject).startsWith(`Job ${jobId} `));
      const until = Date.now() + 10_000;
      while ((await about()).length < expected && Date.now() < until) await sleep(50);
      await sleep(200); // a second e-mail, if one were queued, would be there by now
      return about();
    };

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      ada = await registerUser(service, 'ada');
      bob = await registerUser(service, 'bob', { name: 'Bob', email: 'bob@example.com' });
      carol = await registerUser(service, 'carol', { name: 'Carol', email: 'carol@example.com' });
      ada.token = await loginToken(service, 'ada');
      const project = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada.token), body: { projectName: 'Loop' } });
      projectId = Number(project.body.id);
      // Bob collaborates (an invitation he accepts); Carol does not.
      const invited = await post('/collaborators/add', { usernameOrEmail: 'bob' });
      expect(invited.status).toBe(200);
      expect((await call(service, 'POST', `/api/user/invitations/${Number(invited.body.id)}/accept`, { headers: jwt(bob.token) })).status).toBe(200);
      for (const [label, f] of [['idle', 1], ['wave', 9]] as const) await ingestSample(service, String(project.body.apiKey), { category: 'training', label, rows: rows(f), fileName: `${label}.json` });
      expect((await post('/impulse', impulse)).status).toBe(200);
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('lists collaborators only in trainJobNotificationUids: anyone else is refused with a 400 and nothing changes', async () => {
      const refused = await call(service, 'POST', `/api/${projectId}`, { headers: jwt(ada.token), body: { trainJobNotificationUids: [ada.id, carol.id] } });
      expect(refused.status).toBe(400);
      expect(String(refused.body.error)).toMatch(/trainJobNotificationUids/);
      expect((await get('')).body.trainJobNotificationUids).toEqual([]);
      const set = await call(service, 'POST', `/api/${projectId}`, { headers: jwt(ada.token), body: { trainJobNotificationUids: [ada.id, bob.id] } });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      expect((await get('')).body.trainJobNotificationUids).toEqual([ada.id, bob.id]);
    });

    it('e-mails the train list when a train-keras or train-anomaly job ends, once each, and nobody for a DSP job', async () => {
      const features = await run('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
      expect(features.job).toMatchObject({ finishedSuccessful: true, jobNotificationUids: [] });

      const keras = await run('/jobs/train/keras/3', { trainingCycles: 2 });
      const anomaly = await run('/jobs/train/anomaly/4', { axes: [0, 1], clusterCount: 2, minimumConfidenceRating: 0.3 });
      expect(keras.job).toMatchObject({ finishedSuccessful: true, jobNotificationUids: [ada.id, bob.id] });
      expect(anomaly.job).toMatchObject({ finishedSuccessful: true, jobNotificationUids: [ada.id, bob.id] });
      for (const [user, address] of [[ada, 'ada@example.com'], [bob, 'bob@example.com']] as const) {
        expect(await emailsAbout(user.id, keras.jobId, 1)).toEqual([expect.objectContaining({ to: address, subject: `Job ${keras.jobId} (Train model) finished successfully` })]);
        expect(await emailsAbout(user.id, anomaly.jobId, 1)).toEqual([expect.objectContaining({ to: address, subject: `Job ${anomaly.jobId} (Train anomaly detection model) finished successfully` })]);
        expect(await emailsAbout(user.id, features.jobId, 0)).toEqual([]);
      }
      expect(await emailsAbout(carol.id, keras.jobId, 0)).toEqual([]);
    }, 180_000);

    it('e-mails a cancelled training too, saying it was cancelled', async () => {
      const res = await post('/jobs/train/keras/3', { trainingCycles: 10_000 });
      const jobId = Number(res.body.id);
      const end = Date.now() + 60_000;
      while (!/Epoch 1\/10000/.test(((await get(`/jobs/${jobId}/stdout`)).body.stdout as { data: string }[]).map((l) => l.data).join(''))) {
        if (Date.now() > end) throw new Error('no epoch line');
        await sleep(100);
      }
      expect((await post(`/jobs/${jobId}/cancel`)).status).toBe(200);
      expect((await finished(jobId)).finishedSuccessful).toBe(false);
      expect(await emailsAbout(bob.id, jobId, 1)).toEqual([expect.objectContaining({ subject: `Job ${jobId} (Train model) was cancelled` })]);
    }, 90_000);

    it("counts training jobs' compute time in the project's compute time", async () => {
      const { jobs } = await new JobQueries(service.stores.readStore).list({ projectId }, { finished: 'all' });
      const training = jobs.filter((j) => j.categoryKey === 'train-keras' || j.categoryKey === 'train-anomaly');
      expect(training.length).toBe(3);
      // A keras training of two epochs runs TensorFlow.js for a while: its time is recorded, not zero.
      expect(training.find((j) => j.categoryKey === 'train-keras' && j.finishedSuccessful)!.computeTimeMs).toBeGreaterThan(0);
      const info = await get('');
      expect((info.body.computeTime as { timeUsedMs: number }).timeUsedMs).toBe(jobs.reduce((n, j) => n + j.computeTimeMs, 0));
    });
  });
}

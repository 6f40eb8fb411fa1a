// Point-in-time views: at every step of a scripted project life, the live answers are kept with
// the time; at the end, asOf each of those times must answer exactly what was live then.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inviteAndAccept } from '../support/collaborators';
import { signedSample } from '../support/signedSample';
import { call, startTestService, registerUser, type TestService } from '../support/testService';

const jwt = (token: string) => ({ 'x-jwt-token': token });

interface Moment {
  step: string;
  time: string;
  info: Record<string, unknown>;
  samples: Record<string, unknown>;
  count: Record<string, unknown>;
}

describe('asOf on project information and the raw-data listing', () => {
  let service: TestService;
  let ada: { id: number; token: string };
  let bob: { id: number; token: string };
  let projectId: number;
  let apiKey: string;
  let hmacKey: string;
  let before: string;
  const moments: Moment[] = [];

  const get = async (path: string) => {
    const res = await call(service, 'GET', path, { headers: jwt(ada.token) });
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body;
  };
  const views = async (query = '') => ({
    info: await get(`/api/${projectId}${query}`),
    samples: await get(`/api/${projectId}/raw-data?category=training&limit=100${query.replace("?", "&")}`),
    count: await get(`/api/${projectId}/raw-data/count?category=training${query.replace("?", "&")}`),
  });
  const ingest = async (fileName: string, values: number[][]) => {
    const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': fileName },
      body: signedSample(hmacKey, values),
    });
    expect(res.status).toBe(200);
  };
  /** Waits until the listing shows `count` samples: ingestion may answer before the read models have them. */
  const untilSamples = async (count: number) => {
    for (let i = 0; i < 200; i++) {
      if ((await get(`/api/${projectId}/raw-data/count?category=training`)).count === count) return;
      await sleep(10);
    }
    throw new Error(`the listing never showed ${count} samples`);
  };
  /** Keeps the live views with the time, then lets the clock move past it before the next step. */
  const moment = async (step: string) => {
    await sleep(3);
    const time = new Date().toISOString();
    moments.push({ step, time, ...(await views()) });
    await sleep(3);
  };

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    await registerUser(service, 'staffer');
    ada = await registerUser(service, 'ada');
    bob = await registerUser(service, 'bob');
    before = new Date().toISOString();
    await sleep(3);
    const created = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada.token), body: { projectName: 'Time travel' } });
    projectId = Number(created.body.id);
    apiKey = String(created.body.apiKey);
    hmacKey = String((await call(service, 'GET', `/api/${projectId}/devkeys`, { headers: jwt(ada.token) })).body.hmacKey);
    await moment('created');
    await call(service, 'POST', `/api/${projectId}`, { headers: jwt(ada.token), body: { description: 'first words', name: 'Time travel 2' } });
    await moment('renamed');
    await ingest('one.json', [[1, 2], [3, 4]]);
    await ingest('two.json', [[5, 6], [7, 8], [9, 10]]);
    await untilSamples(2);
    await moment('two samples');
    await inviteAndAccept(service, projectId, ada.token, bob.token, 'bob');
    await moment('bob joined');
    const impulse = await call(service, 'POST', `/api/${projectId}/impulse`, {
      headers: jwt(ada.token),
      body: {
        name: 'Motion',
        inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY'], windowSizeMs: 20, windowIncreaseMs: 10, frequencyHz: 100 }],
        dspBlocks: [{ id: 2, type: 'raw', name: 'Raw', title: 'Raw data', axes: ['accX', 'accY'], input: 1 }],
        learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
      },
    });
    expect(impulse.status, JSON.stringify(impulse.body)).toBe(200);
    await moment('impulse');
    const listed = (await get(`/api/${projectId}/raw-data?category=training&limit=10`)).samples as { id: number }[];
    expect((await call(service, 'DELETE', `/api/${projectId}/raw-data/${listed[0]!.id}`, { headers: jwt(ada.token) })).status).toBe(200);
    await untilSamples(1);
    await moment('sample deleted');
    await call(service, 'POST', `/api/${projectId}/collaborators/remove`, { headers: jwt(ada.token), body: { usernameOrEmail: 'bob' } });
    await moment('bob left');
  });

  afterAll(async () => {
    await service?.destroy();
  });

  it('answers at every step what was live then', async () => {
    expect(moments.map((m) => m.step)).toEqual(['created', 'renamed', 'two samples', 'bob joined', 'impulse', 'sample deleted', 'bob left']);
    for (const m of moments) {
      const then = await views(`?asOf=${encodeURIComponent(m.time)}`);
      expect(then.info, `project information as of "${m.step}"`).toEqual(m.info);
      expect(then.samples, `raw data as of "${m.step}"`).toEqual(m.samples);
      expect(then.count, `count as of "${m.step}"`).toEqual(m.count);
    }
    // The steps really differ: the comparison above could not pass with one view for all.
    expect(new Set(moments.map((m) => JSON.stringify(m.info))).size).toBe(moments.length);
  });

  it('answers 404 before the project existed, and 400 for a bad or future time', async () => {
    const early = await call(service, 'GET', `/api/${projectId}?asOf=${encodeURIComponent(before)}`, { headers: jwt(ada.token) });
    expect(early.status).toBe(404);
    expect((await call(service, 'GET', `/api/${projectId}/raw-data/count?category=training&asOf=${encodeURIComponent(before)}`, { headers: jwt(ada.token) })).status).toBe(404);
    expect((await call(service, 'GET', `/api/${projectId}?asOf=yesterday`, { headers: jwt(ada.token) })).status).toBe(400);
    expect((await call(service, 'GET', `/api/${projectId}?asOf=2999-01-01T00:00:00Z`, { headers: jwt(ada.token) })).status).toBe(400);
  });

  it('is refused to those who cannot read the project now', async () => {
    const when = encodeURIComponent(moments[3]!.time);
    // Bob collaborated then, and has left since.
    expect((await call(service, 'GET', `/api/${projectId}?asOf=${when}`, { headers: jwt(bob.token) })).status).toBe(403);
  });

  // Runs last: it deletes Bob's account.
  it('shows no trace of a person forgotten since, not even their username, in a past view', async () => {
    const when = encodeURIComponent(moments[3]!.time);
    const then = async () => (await call(service, 'GET', `/api/${projectId}?asOf=${when}`, { headers: jwt(ada.token) })).body;
    expect(JSON.stringify(await then())).toContain('"bob"');
    expect((await call(service, 'DELETE', '/api/user', { headers: jwt(bob.token), body: { password: 'correct horse battery' } })).status).toBe(200);
    const after = await then();
    expect(after.success).toBe(true);
    expect(JSON.stringify(after)).not.toMatch(/"bob"|bob@example\.com/);
    expect(((after.project as { collaborators?: unknown[] }).collaborators ?? (after as { collaborators?: unknown[] }).collaborators ?? []).length).toBeGreaterThan(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VersionEvent } from '../../domain/version/versionEvents';
import { routeSpec, type RouteSpec } from '../support/routeSpec';
import { signup } from '../support/signup';

/**
 * Who may restore a version (JobsApi.startRestoreJob) and what is refused before any job: every
 * refusal about the source is the same 404, bad ids and the own project a 400, a running restore a
 * 409; none of them appends anything. No job worker runs here: an accepted request only requests its job.
 */
describe('the restore route', () => {
  let spec: RouteSpec;
  const token: Record<string, string> = {};
  let source: number;
  let sourceKey: string;
  let bobs: number;
  let bobsKey: string;
  const versionId = 900;
  const as = (who: string, method: string, pathname: string, body?: unknown) => spec.request(method, pathname, { headers: { 'x-jwt-token': token[who]! }, ...(body === undefined ? {} : { body }) });
  const version: VersionEvent = {
    type: 'VersionCreated',
    data: {
      projectId: 0, versionId, number: 1, description: 'v1', position: '1', jobId: 1, createdByUserId: null, created: '2026-11-27T10:00:00.000Z',
      contents: { samples: { count: 0, digest: 'a'.repeat(64), blobs: [] }, impulses: 'b'.repeat(64), features: [], models: [], trainingAccuracy: null, testAccuracy: null },
    },
  };
  /** Asserts the answer and that nothing was appended. */
  const refused = async (who: string, target: number, body: unknown, status: number, error: RegExp) => {
    const before = await spec.deps.events.headPosition();
    const res = await as(who, 'POST', `/api/${target}/jobs/restore`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(String(res.body.error)).toMatch(error);
    expect(await spec.deps.events.headPosition()).toBe(before);
  };
  const unreadable = /^No version \d+ of project \d+ is readable with these credentials$/;

  beforeAll(async () => {
    spec = await routeSpec();
    for (const who of ['ada', 'bob']) {
      await spec.request('POST', '/api-user-create', { body: signup({ name: who, username: who, email: `${who}@example.com` }) });
      token[who] = String((await spec.request('POST', '/api-login', { body: { username: who, password: 'correct horse battery' } })).body.token);
    }
    const created = (await as('ada', 'POST', '/api/projects/create', { projectName: 'Source' })).body;
    [source, sourceKey] = [Number(created.id), String(created.apiKey)];
    const bobsProject = (await as('bob', 'POST', '/api/projects/create', { projectName: 'Bob\'s' })).body;
    [bobs, bobsKey] = [Number(bobsProject.id), String(bobsProject.apiKey)];
    await spec.given(`versions-${source}`, [{ ...version, data: { ...version.data, projectId: source } }]);
  });
  afterAll(async () => {
    await spec?.close();
  });

  it('answers one 404 to a stranger, to another project\'s key, to a wrong key, and for a version or project that does not exist', async () => {
    await refused('bob', bobs, { projectId: source, versionId }, 404, unreadable);
    await refused('bob', bobs, { projectId: source, versionId, projectApiKey: bobsKey }, 404, unreadable);
    await refused('bob', bobs, { projectId: source, versionId, projectApiKey: `${sourceKey}x` }, 404, unreadable);
    await refused('ada', bobs, { projectId: source, versionId }, 403, /not a collaborator/);
    await refused('bob', bobs, { projectId: source, versionId: versionId + 1, projectApiKey: sourceKey }, 404, unreadable);
    await refused('bob', bobs, { projectId: 987_654, versionId }, 404, unreadable);
  });

  it('answers 400 for ids that are not ids, a body with fields the SDK does not send, and a restore into the version\'s own project', async () => {
    for (const body of [{ projectId: -1, versionId }, { projectId: source, versionId: 2 ** 60 }, { projectId: source, versionId: 1.5 }, { projectId: String(source), versionId }, { projectId: source }, { projectId: source, versionId, extra: 1 }, { projectId: source, versionId, projectApiKey: 7 }, { projectId: source, versionId, projectApiKey: '' }, { projectId: source, versionId, projectApiKey: 'k'.repeat(5000) }, [source, versionId]]) {
      await refused('bob', bobs, body, 400, /Invalid request body/);
    }
    await refused('ada', source, { projectId: source, versionId }, 400, /into another project/);
  });

  it('takes the source project\'s key from a stranger, and refuses a second restore while the first one\'s job has not ended', async () => {
    const res = await as('bob', 'POST', `/api/${bobs}/jobs/restore`, { projectId: source, versionId, projectApiKey: sourceKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const jobId = Number(res.body.id);
    const requested = (await spec.appended()).filter((e) => e.type === 'JobRequested');
    expect(requested.at(-1)!.data).toMatchObject({ jobId, projectId: bobs, categoryKey: 'restore', parameters: { sourceProjectId: source, versionId, reader: { kind: 'apiKey', apiKeyId: expect.any(Number) } } });
    // The key is a secret: it is not in the job's parameters.
    expect(JSON.stringify(requested.at(-1)!.data)).not.toContain(sourceKey);
    await spec.caughtUp();
    await refused('bob', bobs, { projectId: source, versionId, projectApiKey: sourceKey }, 409, new RegExp(`Restore job ${jobId} is still running`));
  });

  it('starts one of two restores sent at once into the same project and refuses the other with 409', async () => {
    const { id: target } = (await as('ada', 'POST', '/api/projects/create', { projectName: 'Raced' })).body as { id: number };
    const answers = await Promise.all([1, 2, 3].map(() => as('ada', 'POST', `/api/${target}/jobs/restore`, { projectId: source, versionId })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    const jobId = Number(answers.find((a) => a.status === 200)!.body.id);
    for (const refused of answers.filter((a) => a.status === 409)) expect(String(refused.body.error)).toMatch(new RegExp(`Restore job ${jobId} is still running`));
  });

  it('answers 404 for a version of another project named under a project the caller reads', async () => {
    const { id: other } = (await as('ada', 'POST', '/api/projects/create', { projectName: 'Other versions' })).body as { id: number };
    await spec.given(`versions-${other}`, [{ ...version, data: { ...version.data, projectId: other, versionId: 901 } }]);
    await refused('ada', bobs, { projectId: source, versionId: 901 }, 403, /not a collaborator/);
    const { id: mine } = (await as('ada', 'POST', '/api/projects/create', { projectName: 'Mine' })).body as { id: number };
    await refused('ada', mine, { projectId: source, versionId: 901 }, 404, unreadable);
  });

  it('reads no version of a deleted project, not even with its key', async () => {
    expect((await as('ada', 'DELETE', `/api/${source}`)).status).toBe(200);
    await spec.caughtUp();
    const { id: empty } = (await as('ada', 'POST', '/api/projects/create', { projectName: 'Empty' })).body as { id: number };
    await refused('ada', empty, { projectId: source, versionId }, 404, unreadable);
    await refused('ada', empty, { projectId: source, versionId, projectApiKey: sourceKey }, 404, unreadable);
  });
});

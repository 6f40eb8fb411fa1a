import { afterAll, beforeAll, expect, it } from 'vitest';
import { adaAndBob, call, describeOn, setups, startTestService, type TestService, loginToken } from '../support/testService';
import { REQUIRED_PROJECT_FIELDS, REQUIRED_PROJECT_INFO_FIELDS } from '../support/projectFields';

const emptySummary = { totalLengthMs: 0, labels: [], totalLabels: 0, dataCount: 0 };

for (const setup of setups) {
  describeOn(setup, 'projects over HTTP', () => {
    let service: TestService;
    let ada: string;
    let bob: string;
    let projectId: number;
    let apiKey: string;
    let bobProjectId: number;
    let bobApiKey: string;

    const login = (username: string) => loginToken(service, username);
    const jwt = (token: string) => ({ 'x-jwt-token': token });

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      ({ ada, bob } = await adaAndBob(service));
      const bobs = await call(service, 'POST', '/api/projects/create', { headers: jwt(bob), body: { projectName: 'Bob things' } });
      bobProjectId = Number(bobs.body.id);
      bobApiKey = String(bobs.body.apiKey);
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('creates a project and answers its id and a development API key starting ei_', async () => {
      const res = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada), body: { projectName: 'Gestures' } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, id: expect.any(Number), apiKey: expect.stringMatching(/^ei_[0-9a-f]{64}$/) });
      projectId = Number(res.body.id);
      apiKey = String(res.body.apiKey);
    });

    it('lists the user\'s projects, newest first, each with every required Project field', async () => {
      const res = await call(service, 'GET', '/api/projects', { headers: jwt(ada) });
      expect(res.status).toBe(200);
      const projects = res.body.projects as Record<string, unknown>[];
      expect(projects.map((p) => p.name)).toEqual(['Gestures', 'ada-project-1']);
      for (const p of projects) for (const f of REQUIRED_PROJECT_FIELDS) expect(p, f).toHaveProperty(f);
      expect(projects[0]).toMatchObject({ owner: 'Ada Lovelace', labelingMethod: 'single_label', tier: 'free', whitelabelId: null, isPublic: false });
    });

    it('lists only the key\'s own project for an API key', async () => {
      const res = await call(service, 'GET', '/api/projects', { headers: { 'x-api-key': apiKey } });
      expect((res.body.projects as { id: number }[]).map((p) => p.id)).toEqual([projectId]);
    });

    it('answers project information with every required field and real values', async () => {
      const res = await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada) });
      expect(res.status).toBe(200);
      for (const f of REQUIRED_PROJECT_INFO_FIELDS) expect(res.body, f).toHaveProperty(f);
      const project = res.body.project as Record<string, unknown>;
      for (const f of REQUIRED_PROJECT_FIELDS) expect(project, f).toHaveProperty(f);
      expect(project).toMatchObject({ id: projectId, name: 'Gestures', owner: 'Ada Lovelace', ownerUserId: expect.any(Number) });
      expect(project.collaborators).toEqual([expect.objectContaining({ username: 'ada', isOwner: true })]);
      expect(res.body.collaborators).toEqual([expect.objectContaining({ username: 'ada' })]);
      expect((res.body.collaborators as object[])[0]).not.toHaveProperty('isOwner');
      expect(res.body.developmentKeys).toEqual({ apiKey, hmacKey: expect.stringMatching(/^[0-9a-f]{32}$/) });
      expect(res.body.dataSummary).toEqual(emptySummary);
      expect(res.body.dataSummaryPerCategory).toEqual({ training: emptySummary, testing: emptySummary, validation: emptySummary, postProcessing: emptySummary });
      expect(res.body.impulse).toEqual({ created: false, configured: false, complete: false });
      expect(res.body).toMatchObject({
        acquisitionSettings: { viewType: 'list' },
        deploySettings: { sensor: 'unknown' },
        anomalyLabelsConfig: { anomalyLabels: ['anomaly'], noAnomalyLabels: ['no anomaly'] },
        showCreateFirstImpulse: true,
      });
    });

    it('leaves the development keys undefined under API-key authentication', async () => {
      const info = await call(service, 'GET', `/api/${projectId}`, { headers: { 'x-api-key': apiKey } });
      expect(info.status).toBe(200);
      expect(info.body.developmentKeys).toEqual({});
      const devkeys = await call(service, 'GET', `/api/${projectId}/devkeys`, { headers: { 'x-api-key': apiKey } });
      expect(devkeys.body).toEqual({ success: true });
      const withJwt = await call(service, 'GET', `/api/${projectId}/devkeys`, { headers: jwt(ada) });
      expect(withJwt.body).toEqual({ success: true, apiKey, hmacKey: expect.stringMatching(/^[0-9a-f]{32}$/) });
    });

    it('lets an API key reach only its own project', async () => {
      for (const path of [`/api/${bobProjectId}`, `/api/${bobProjectId}/devkeys`]) {
        const res = await call(service, 'GET', path, { headers: { 'x-api-key': apiKey } });
        expect(res.status, path).toBe(403);
        expect(res.body).toEqual({ success: false, error: `This API key does not give access to project ${bobProjectId}` });
      }
    });

    it('lets a user reach only projects they collaborate on', async () => {
      for (const path of [`/api/${projectId}`, `/api/${projectId}/devkeys`]) {
        const res = await call(service, 'GET', path, { headers: jwt(bob) });
        expect(res.status, path).toBe(403);
        expect(res.body.success).toBe(false);
      }
      const own = await call(service, 'GET', `/api/${bobProjectId}`, { headers: { 'x-api-key': bobApiKey } });
      expect(own.status).toBe(200);
    });

    it('answers 404 for an unknown project and 400 for an id that is not an integer', async () => {
      const unknown = await call(service, 'GET', '/api/999999', { headers: jwt(ada) });
      expect(unknown).toMatchObject({ status: 404, body: { success: false, error: 'Project 999999 not found' } });
      const notInt = await call(service, 'GET', '/api/abc', { headers: jwt(ada) });
      expect(notInt.status).toBe(400);
      expect(notInt.body.error).toMatch(/projectId/);
    });

    it('refuses a bad or missing API key with 401', async () => {
      const bad = await call(service, 'GET', `/api/${projectId}`, { headers: { 'x-api-key': 'ei_' + '0'.repeat(64) } });
      expect(bad).toMatchObject({ status: 401, body: { success: false, error: 'Invalid API key' } });
      const none = await call(service, 'GET', `/api/${projectId}`);
      expect(none.status).toBe(401);
    });

    it('refuses a bad project body with 400 naming the field, appending nothing', async () => {
      const before = await service.stores.events.headPosition();
      const missing = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada), body: {} });
      expect(missing).toMatchObject({ status: 400, body: { success: false, error: 'Invalid request body: "projectName" is required' } });
      const wrong = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada), body: { projectName: 42 } });
      expect(wrong.body.error).toMatch(/"projectName": expected string/);
      const visibility = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada), body: { projectName: 'x', projectVisibility: 'secret' } });
      expect(visibility.body.error).toMatch(/"projectVisibility"/);
      const blank = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada), body: { projectName: '   ' } });
      expect(blank).toMatchObject({ status: 400, body: { error: 'Project name must not be empty' } });
      expect(await service.stores.events.headPosition()).toBe(before);
    });

    it('does not let an API key create projects', async () => {
      const res = await call(service, 'POST', '/api/projects/create', { headers: { 'x-api-key': apiKey }, body: { projectName: 'By key' } });
      expect(res.status).toBe(403);
    });

    it('serves an OpenAPI document built from the request schemas', async () => {
      const res = await call(service, 'GET', '/openapi.json');
      const paths = res.body.paths as Record<string, Record<string, { operationId: string; requestBody?: unknown }>>;
      expect(paths['/api-user-create']!.post!.operationId).toBe('createUser');
      expect(JSON.stringify(paths['/api-user-create']!.post!.requestBody)).toContain('privacyPolicy');
      expect(paths['/api/{projectId}']!.get!.operationId).toBe('getProjectInfo');
    });

    it('answers the same after a restart on the same data', async () => {
      const before = await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada) });
      service = await service.restart();
      const token = await login('ada');
      expect(token.split('.')).toHaveLength(3);
      const after = await call(service, 'GET', `/api/${projectId}`, { headers: jwt(token) });
      // computeTime's period depends on the clock, and logging in again moves lastSeen.
      const stable = (body: unknown) => JSON.parse(JSON.stringify(body, (key, value: unknown) => (key === 'lastSeen' || key === 'computeTime' ? undefined : value))) as unknown;
      expect(stable(after.body)).toEqual(stable(before.body));
      const oldToken = await call(service, 'GET', '/api/user/projects', { headers: jwt(ada) });
      expect(oldToken.status).toBe(200);
    });
  });
}

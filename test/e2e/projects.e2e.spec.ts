import { EdgeImpulseApi } from 'edge-impulse-api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, describeOn, setups, startTestService, type TestService } from '../support/testService';
import { REQUIRED_PROJECT_FIELDS, REQUIRED_PROJECT_INFO_FIELDS } from '../support/projectFields';
import { readModelsCaughtUp } from '../support/readModels';

// The official SDK's projects namespace (ProjectsApi), unmodified, pointed at the service.
//
// The SDK throws a plain Error whose message is the body's `error` and carries no status code, so
// where a status matters the same request is repeated without the SDK (`call`) to read it.

/** An acquisition-format sample without a signature (alg none). */
const UNSIGNED_SAMPLE = JSON.stringify({
  protected: { ver: 'v1', alg: 'none' },
  signature: '0',
  payload: { interval_ms: 10, sensors: [{ name: 'accX', units: 'm/s2' }], values: [[1], [2], [3]] },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const setup of setups) {
  describeOn(setup, 'the official SDK projects namespace against the service', () => {
    let service: TestService;
    let api: EdgeImpulseApi;
    let bobApi: EdgeImpulseApi;
    let bobId: number;
    let bobToken: string;
    let projectId: number;
    let developmentApiKey: string;
    let readonlyKey: { id: number; apiKey: string };
    let ingestionKey: { id: number; apiKey: string };

    /** An SDK client authenticated with an API key. */
    const withKey = async (apiKey: string) => {
      const client = new EdgeImpulseApi({ endpoint: service.apiUrl });
      await client.authenticate({ method: 'apiKey', apiKey });
      return client;
    };
    const ingest = (apiKey: string, fileName: string) =>
      fetch(`${service.ingestionUrl}/api/training/data`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': fileName },
        body: UNSIGNED_SAMPLE,
      });
    const statusOf = async (method: string, pathname: string, headers: Record<string, string>, body?: unknown) =>
      (await call(service, method, pathname, { headers, ...(body === undefined ? {} : { body }) })).status;

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      api = new EdgeImpulseApi({ endpoint: service.apiUrl });
      await api.user.createUser({ name: 'Grace Hopper', username: 'grace', email: 'grace@example.com', password: 'cobol-for-ever', privacyPolicy: true, turnstileResponse: 'ok' });
      await api.authenticate({ method: 'jwtToken', jwtToken: (await api.login.login({ username: 'grace', password: 'cobol-for-ever' })).token! });
      bobApi = new EdgeImpulseApi({ endpoint: service.apiUrl });
      await bobApi.user.createUser({ name: 'Bob Bemer', username: 'bob', email: 'bob@example.com', password: 'ascii-for-ever', privacyPolicy: true, turnstileResponse: 'ok' });
      bobToken = (await bobApi.login.login({ username: 'bob', password: 'ascii-for-ever' })).token!;
      await bobApi.authenticate({ method: 'jwtToken', jwtToken: bobToken });
      bobId = (await bobApi.user.getCurrentUser()).id;
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('creates a project whose information has every required field, no impulse and the default anomaly labels', async () => {
      const created = await api.projects.createProject({ projectName: 'Vibration' });
      projectId = created.id;
      developmentApiKey = created.apiKey;
      expect(developmentApiKey).toMatch(/^ei_/);
      const info = await api.projects.getProjectInfo(projectId);
      for (const f of REQUIRED_PROJECT_INFO_FIELDS) expect(info, f).toHaveProperty(f);
      for (const f of REQUIRED_PROJECT_FIELDS) expect(info.project, f).toHaveProperty(f);
      expect(info.success).toBe(true);
      expect(info.project).toMatchObject({ id: projectId, name: 'Vibration', owner: 'Grace Hopper', labelingMethod: 'single_label' });
      expect(info.project.created).toBeInstanceOf(Date);
      expect(info.impulse).toEqual({ created: false, configured: false, complete: false });
      expect(info.anomalyLabelsConfig).toEqual({ anomalyLabels: ['anomaly'], noAnomalyLabels: ['no anomaly'] });
      expect(info.developmentKeys).toEqual({ apiKey: developmentApiKey, hmacKey: expect.any(String) });
      expect(info.computeTime.periodStartDate).toBeInstanceOf(Date);
      expect(info.trainJobNotificationUids).toEqual([]);
      expect(info.explicitValidationEnabled).toBe(false);
      expect(info.readme).toBeUndefined();
    });

    it('adds a collaborator by e-mail, who once they accept lists and reads the project with their own JWT', async () => {
      await expect(bobApi.projects.getProjectInfo(projectId)).rejects.toThrow(`You are not a collaborator on project ${projectId}`);
      const { id: invitationId } = await api.projects.addCollaborator(projectId, { usernameOrEmail: 'bob@example.com' });
      // Invited, not yet in: the SDK has no call for the answer, which is the invitee's own.
      await expect(bobApi.projects.getProjectInfo(projectId)).rejects.toThrow(`You are not a collaborator on project ${projectId}`);
      expect((await call(service, 'POST', `/api/user/invitations/${invitationId}/accept`, { headers: { 'x-jwt-token': bobToken } })).status).toBe(200);
      expect((await bobApi.projects.listProjects()).projects.map((p) => p.id)).toContain(projectId);
      const seen = await bobApi.projects.getProjectInfo(projectId);
      expect(seen.project.name).toBe('Vibration');
      expect(seen.project.collaborators.map((c) => [c.username, c.isOwner])).toEqual(
        expect.arrayContaining([['grace', true], ['bob', false]]),
      );
      expect(seen.collaborators.map((c) => c.username).sort()).toEqual(['bob', 'grace']);
    });

    it('updates the settings and shows each in the project information, moving lastModified', async () => {
      const before = (await api.projects.getProjectInfo(projectId)).project;
      await sleep(5);
      await api.projects.updateProject(projectId, {
        name: 'Vibration monitor',
        description: 'Bearings on the pump',
        readme: '# Pump\n\nWatch the **bearings**.\n\n<script>alert("pwned")</script>\n',
        labelingMethod: 'object_detection',
        dspPageSize: 50,
        trainJobNotificationUids: [bobId],
        lastShownModelEngine: 'tflite',
        explicitValidationEnabled: true,
        anomalyLabelsConfig: { anomalyLabels: ['broken'], noAnomalyLabels: ['fine', 'idle'] },
      });
      const info = await api.projects.getProjectInfo(projectId);
      expect(info.project).toMatchObject({ name: 'Vibration monitor', description: 'Bearings on the pump', labelingMethod: 'object_detection' });
      expect(info.readme!.markdown).toContain('Watch the **bearings**.');
      expect(info.readme!.html).toContain('<h1');
      expect(info.readme!.html).toContain('<strong>bearings</strong>');
      expect(info.readme!.html).not.toMatch(/<script/i);
      expect(info.readme!.html).not.toContain('pwned');
      expect(info.dspPageSize).toBe(50);
      expect(info.trainJobNotificationUids).toEqual([bobId]);
      expect(info.lastShownModelEngine).toBe('tflite');
      expect(info.explicitValidationEnabled).toBe(true);
      expect(info.anomalyLabelsConfig).toEqual({ anomalyLabels: ['broken'], noAnomalyLabels: ['fine', 'idle'] });
      expect(info.project.lastModified).toBeInstanceOf(Date);
      expect(info.project.lastModified!.getTime()).toBeGreaterThan(before.lastModified?.getTime() ?? 0);
      expect(info.project.lastModificationDetails).toEqual(expect.any(String));
      expect(info.project.lastModificationDetails).not.toBe(before.lastModificationDetails);
      // The collaborator sees the same settings.
      expect((await bobApi.projects.getProjectInfo(projectId)).project.name).toBe('Vibration monitor');
    });

    it('replaces the tags and sets and reads the target constraints', async () => {
      await api.projects.updateProjectTags(projectId, { tags: ['industrial', 'vibration'] });
      expect((await api.projects.getProjectInfo(projectId)).project.tags).toEqual(['industrial', 'vibration']);
      await api.projects.updateProjectTags(projectId, { tags: ['pumps'] });
      expect((await api.projects.getProjectInfo(projectId)).project.tags).toEqual(['pumps']);

      const empty = await api.projects.getTargetConstraints(projectId);
      expect(empty.targetConstraints).toEqual({ targetDevices: [], applicationBudgets: [] });
      const constraints = {
        selectedTargetBasedOn: 'user-configured' as const,
        targetDevices: [{ board: 'nordic-nrf52840-dk', name: 'Nordic nRF52840 DK', latencyDevice: 'nrf52840', processors: [{ part: 'nRF52840', architecture: 'Cortex-M4F', fpu: true, clockRateMhz: { minimum: 64, maximum: 64 } }] }],
        applicationBudgets: [{ latencyPerInferenceMs: { maximum: 100 }, memoryOverhead: { ram: { fastBytes: { maximum: 65536 } } } }],
      };
      await api.projects.setTargetConstraints(projectId, constraints);
      expect((await api.projects.getTargetConstraints(projectId)).targetConstraints).toEqual(constraints);
      expect((await api.projects.getProjectInfo(projectId)).targetConstraints).toEqual(constraints);
    });

    it('lists the API keys, the development key in full for a JWT user', async () => {
      const { apiKeys } = await api.projects.listProjectApiKeys(projectId);
      const development = apiKeys.find((k) => k.isDevelopmentKey);
      expect(development).toMatchObject({ apiKey: developmentApiKey, role: 'admin' });
      expect(development!.created).toBeInstanceOf(Date);
      // With an API key, no key is shown in full.
      const viaKey = await (await withKey(developmentApiKey)).projects.listProjectApiKeys(projectId);
      expect(viaKey.apiKeys.find((k) => k.isDevelopmentKey)!.apiKey).not.toBe(developmentApiKey);
    });

    it('adds a readonly key that reads the project but may not change it (403)', async () => {
      readonlyKey = await api.projects.addProjectApiKey(projectId, { name: 'dashboard', isDevelopmentKey: false, role: 'readonly' });
      expect(readonlyKey.apiKey).toMatch(/^ei_/);
      const listed = (await api.projects.listProjectApiKeys(projectId)).apiKeys.find((k) => k.id === readonlyKey.id);
      expect(listed).toMatchObject({ name: 'dashboard', role: 'readonly', isDevelopmentKey: false });
      expect(listed!.apiKey).not.toBe(readonlyKey.apiKey);

      const reader = await withKey(readonlyKey.apiKey);
      expect((await reader.projects.getProjectInfo(projectId)).project.name).toBe('Vibration monitor');
      expect(await reader.projects.getCurrentApiKeyInfo()).toEqual({ success: true, apiKeyId: readonlyKey.id, projectId, role: 'readonly' });
      await expect(reader.projects.updateProject(projectId, { description: 'changed' })).rejects.toThrow('An API key with role "readonly" cannot change this project');
      expect(await statusOf('POST', `/api/${projectId}`, { 'x-api-key': readonlyKey.apiKey }, { description: 'changed' })).toBe(403);
      expect((await api.projects.getProjectInfo(projectId)).project.description).toBe('Bearings on the pump');
    });

    it('adds an ingestion-only key that cannot read the project (403) but can send data', async () => {
      ingestionKey = await api.projects.addProjectIngestionOnlyApiKey(projectId, { name: 'field units' });
      expect(ingestionKey.apiKey).toMatch(/^ei_/);
      const listed = (await api.projects.listProjectApiKeys(projectId)).apiKeys.find((k) => k.id === ingestionKey.id);
      expect(listed).toMatchObject({ name: 'field units', role: 'ingestiononly' });
      const ingester = await withKey(ingestionKey.apiKey);
      await expect(ingester.projects.getProjectInfo(projectId)).rejects.toThrow('An API key with role "ingestiononly" cannot read this project');
      expect(await statusOf('GET', `/api/${projectId}`, { 'x-api-key': ingestionKey.apiKey })).toBe(403);
      const res = await ingest(ingestionKey.apiKey, 'pump.json');
      expect(res.status, await res.clone().text()).toBe(200);
      // Ingestion answers on durability: the project information shows the sample once its read model has it.
      await readModelsCaughtUp(service);
      const info = await api.projects.getProjectInfo(projectId);
      expect(info.dataSummaryPerCategory.training.dataCount).toBe(1);
    });

    it('refuses a revoked key at once (401) on both the management and the ingestion API', async () => {
      const key = await api.projects.addProjectApiKey(projectId, { name: 'to revoke', isDevelopmentKey: false, role: 'admin' });
      const client = await withKey(key.apiKey);
      expect((await client.projects.getProjectInfo(projectId)).project.id).toBe(projectId);
      expect((await ingest(key.apiKey, 'before.json')).status).toBe(200);
      await api.projects.revokeProjectApiKey(projectId, key.id);
      await expect(client.projects.getProjectInfo(projectId)).rejects.toThrow('Invalid API key');
      expect(await statusOf('GET', `/api/${projectId}`, { 'x-api-key': key.apiKey })).toBe(401);
      expect((await ingest(key.apiKey, 'after.json')).status).toBe(401);
      expect((await api.projects.listProjectApiKeys(projectId)).apiKeys.map((k) => k.id)).not.toContain(key.id);

      // The readonly key too, and then its info call fails.
      await api.projects.revokeProjectApiKey(projectId, readonlyKey.id);
      await expect((await withKey(readonlyKey.apiKey)).projects.getCurrentApiKeyInfo()).rejects.toThrow('Invalid API key');
      expect(await statusOf('GET', '/api/projects/api-key-info', { 'x-api-key': readonlyKey.apiKey })).toBe(401);
    });

    it('stops accepting a key added with a time to live of three seconds once it expires', async () => {
      const added = Date.now();
      const key = await api.projects.addProjectApiKey(projectId, { name: 'short lived', isDevelopmentKey: false, role: 'admin', ttl: 3 });
      const listed = (await api.projects.listProjectApiKeys(projectId)).apiKeys.find((k) => k.id === key.id);
      expect(listed!.expires).toBeInstanceOf(Date);
      const client = await withKey(key.apiKey);
      expect((await client.projects.getProjectInfo(projectId)).project.id).toBe(projectId);
      // Three seconds leave room for a slow machine between adding the key and its first use.
      await sleep(Math.max(0, added + 3500 - Date.now()));
      await expect(client.projects.getProjectInfo(projectId)).rejects.toThrow('Invalid API key');
      expect(await statusOf('GET', `/api/${projectId}`, { 'x-api-key': key.apiKey })).toBe(401);
      expect((await ingest(key.apiKey, 'late.json')).status).toBe(401);
    });

    it('lists, adds and revokes HMAC keys, and returns the development HMAC key', async () => {
      const devkey = await api.projects.getHmacDevkey(projectId);
      expect(devkey.hmacKey).toEqual(expect.any(String));
      const initial = (await api.projects.listProjectHmacKeys(projectId)).hmacKeys;
      expect(initial).toEqual([expect.objectContaining({ hmacKey: devkey.hmacKey, isDevelopmentKey: true })]);
      expect(initial[0]!.created).toBeInstanceOf(Date);

      const added = await api.projects.addProjectHmacKey(projectId, { name: 'production', hmacKey: 'f'.repeat(32), isDevelopmentKey: false });
      const hmacId = added.id;
      expect(hmacId).toEqual(expect.any(Number));
      const withAdded = (await api.projects.listProjectHmacKeys(projectId)).hmacKeys;
      expect(withAdded.find((k) => k.id === hmacId)).toMatchObject({ name: 'production', hmacKey: 'f'.repeat(32), isDevelopmentKey: false });
      expect((await api.projects.getHmacDevkey(projectId)).hmacKey).toBe(devkey.hmacKey);

      await api.projects.revokeProjectHmacKey(projectId, hmacId);
      expect((await api.projects.listProjectHmacKeys(projectId)).hmacKeys.map((k) => k.id)).toEqual([initial[0]!.id]);
      await expect(api.projects.revokeProjectHmacKey(projectId, hmacId)).rejects.toThrow(`HMAC key ${hmacId} not found`);
    });

    it('refuses to remove the owner, removes a collaborator, who is then refused (403)', async () => {
      // While Bob is still a collaborator, so the owner rule (not the last-collaborator one) answers.
      await expect(api.projects.removeCollaborator(projectId, { usernameOrEmail: 'grace' })).rejects.toThrow('The owner cannot be removed from the project');
      expect((await api.projects.getProjectInfo(projectId)).project.collaborators.map((c) => c.username).sort()).toEqual(['bob', 'grace']);

      await api.projects.removeCollaborator(projectId, { usernameOrEmail: 'bob@example.com' });
      await expect(bobApi.projects.getProjectInfo(projectId)).rejects.toThrow(`You are not a collaborator on project ${projectId}`);
      const bobToken = (await new EdgeImpulseApi({ endpoint: service.apiUrl }).login.login({ username: 'bob', password: 'ascii-for-ever' })).token!;
      expect(await statusOf('GET', `/api/${projectId}`, { 'x-jwt-token': bobToken })).toBe(403);
      expect((await bobApi.projects.listProjects()).projects.map((p) => p.id)).not.toContain(projectId);
      expect((await api.projects.getProjectInfo(projectId)).project.collaborators.map((c) => c.username)).toEqual(['grace']);
      // Alone, the owner is also the last collaborator.
      await expect(api.projects.removeCollaborator(projectId, { usernameOrEmail: 'grace@example.com' })).rejects.toThrow(/cannot be removed/);
    });

    it('deletes the project: gone at once, its key refused, fully deleted when due, both events in the log', async () => {
      await api.projects.deleteProject(projectId);
      await expect(api.projects.getProjectInfo(projectId)).rejects.toThrow(`Project ${projectId} not found`);
      const graceToken = (await api.login.login({ username: 'grace', password: 'cobol-for-ever' })).token!;
      expect(await statusOf('GET', `/api/${projectId}`, { 'x-jwt-token': graceToken })).toBe(404);
      expect((await api.projects.listProjects()).projects.map((p) => p.id)).not.toContain(projectId);
      await expect((await withKey(developmentApiKey)).projects.getProjectInfo(projectId)).rejects.toThrow('Invalid API key');
      expect(await statusOf('GET', `/api/${projectId}`, { 'x-api-key': developmentApiKey })).toBe(401);
      expect((await ingest(developmentApiKey, 'gone.json')).status).toBe(401);

      await service.fullyDeleteDueProjects(new Date(Date.now() + 8 * 24 * 3600 * 1000));
      const types = (await service.stores.events.readStream(`project-${projectId}`)).map((e) => e.type);
      expect(types).toContain('ProjectDeleted');
      expect(types).toContain('ProjectFullyDeleted');
      expect(types.indexOf('ProjectDeleted')).toBeLessThan(types.indexOf('ProjectFullyDeleted'));
      expect(await statusOf('GET', `/api/${projectId}`, { 'x-jwt-token': graceToken })).toBe(404);
    });
  });
}

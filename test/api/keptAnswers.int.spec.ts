// Answers and principals kept while the read models stand still (api/http/readModelMemo.ts): each
// test asks twice first, so that the second answer and the principal come from what was kept, then
// changes something and asks again. What was kept must never outlive the change it depends on.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inviteAndAccept } from '../support/collaborators';
import { signedSample } from '../support/signedSample';
import { adaWithProject, call, describeOn, loginToken, setups, signup, startTestService, type TestService } from '../support/testService';

for (const setup of setups) {
  describeOn(setup, 'answers kept while the read models stand still', () => {
    let service: TestService;
    let ada: Record<string, string>;
    let bobToken: string;
    let projectId: number;
    let apiKey: string;

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      ({ ada, projectId, apiKey } = await adaWithProject(service, 'Kept'));
      await call(service, 'POST', '/api-user-create', { body: signup({ name: 'Bob', username: 'bob', email: 'bob@example.com' }) });
      bobToken = await loginToken(service, 'bob');
      await inviteAndAccept(service, projectId, ada['x-jwt-token']!, bobToken, 'bob');
    });
    afterAll(async () => {
      await service?.destroy();
    });

    /** Asks twice, expecting the same answer both times; the second is the one kept, where answers are kept. */
    const twice = async (path: string, headers: Record<string, string>) => {
      const first = await call(service, 'GET', path, { headers });
      const second = await call(service, 'GET', path, { headers });
      expect(second.status).toBe(first.status);
      expect(second.body).toEqual(first.body);
      return first;
    };
    const info = (headers: Record<string, string>) => call(service, 'GET', `/api/${projectId}`, { headers });
    const keyHeaders = () => ({ 'x-api-key': apiKey });

    it('answers the same JSON, with its content type, when it is kept', async () => {
      const first = await twice(`/api/${projectId}`, ada);
      expect(first.status).toBe(200);
      const again = await fetch(`${service.apiUrl}/v1/api/${projectId}`, { headers: ada });
      expect(again.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await again.json()).toEqual(first.body);
    });

    it('gives each principal its own answer: development keys to the JWT only', async () => {
      for (let round = 0; round < 2; round++) {
        const byJwt = await info(ada);
        const byKey = await info(keyHeaders());
        expect((byJwt.body.developmentKeys as { apiKey?: string }).apiKey).toBe(apiKey);
        expect(JSON.stringify(byKey.body)).not.toContain(apiKey);
      }
    });

    it('shows a rename at once, to the owner, a collaborator and the key', async () => {
      for (const headers of [ada, { 'x-jwt-token': bobToken }, keyHeaders()]) await twice(`/api/${projectId}`, headers);
      await twice('/api/projects', ada);
      const renamed = await call(service, 'POST', `/api/${projectId}`, { headers: ada, body: { name: 'Kept, renamed' } });
      expect(renamed.status).toBe(200);
      for (const headers of [ada, { 'x-jwt-token': bobToken }, keyHeaders()]) {
        expect((await info(headers)).body.project).toMatchObject({ name: 'Kept, renamed' });
      }
      const listed = await call(service, 'GET', '/api/projects', { headers: ada });
      expect((listed.body.projects as { id: number; name: string }[]).find((p) => p.id === projectId)?.name).toBe('Kept, renamed');
    });

    it('shows a sample once the read models have it: in the information, the listing, the count and the devices', async () => {
      const before = (await twice(`/api/${projectId}`, ada)).body.dataSummary as { dataCount: number };
      const listed = (await twice(`/api/${projectId}/raw-data?category=training`, keyHeaders())).body as { samples: { filename: string }[]; totalCount: number };
      const counted = (await twice(`/api/${projectId}/raw-data/count?category=training`, ada)).body.count as number;
      expect((await twice(`/api/${projectId}/devices`, ada)).body.devices).toEqual([]);
      const sent = await fetch(`${service.ingestionUrl}/api/training/data`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': 'wave.kept.json' },
        body: signedSample('', [[1, 2], [4, 5]], { alg: 'none' }),
      });
      expect(sent.status).toBe(200);
      // Ingestion answers on durability; the read models follow.
      await service.projections!.waitFor((await service.stores.events.headPosition())!, 5000);
      expect(((await info(ada)).body.dataSummary as { dataCount: number }).dataCount).toBe(before.dataCount + 1);
      const listedAfter = (await call(service, 'GET', `/api/${projectId}/raw-data?category=training`, { headers: keyHeaders() })).body as { samples: { id: number; filename: string }[]; totalCount: number };
      expect(listedAfter.totalCount).toBe(listed.totalCount + 1);
      expect(listedAfter.samples.map((x) => x.filename)).toContain('wave.kept.json');
      expect((await call(service, 'GET', `/api/${projectId}/raw-data/count?category=training`, { headers: ada })).body.count).toBe(counted + 1);
      expect(((await call(service, 'GET', `/api/${projectId}/devices`, { headers: ada })).body.devices as { deviceId: string }[]).map((d) => d.deviceId)).toEqual(['ac:87:a3:0a:2d:1b']);
      // And its deletion, at once.
      const sampleId = listedAfter.samples.find((x) => x.filename === 'wave.kept.json')!.id;
      expect((await call(service, 'DELETE', `/api/${projectId}/raw-data/${sampleId}`, { headers: ada })).status).toBe(200);
      expect((await call(service, 'GET', `/api/${projectId}/raw-data/count?category=training`, { headers: ada })).body.count).toBe(counted);
    });

    it("shows a change of the user's own read models at once: a profile edit, a new project", async () => {
      const user = async () => (await call(service, 'GET', '/api/user', { headers: ada })).body as { name: string; projects: { id: number }[] };
      const byId = async (id: number) => (await call(service, 'GET', `/api/users/${id}`, { headers: ada })).body as { name: string };
      const first = await twice('/api/user', ada);
      const adaId = Number(first.body.id);
      await twice(`/api/users/${adaId}`, ada);
      await twice('/api/user/projects', ada);
      expect((await call(service, 'POST', '/api/user', { headers: ada, body: { name: 'Ada, edited' } })).status).toBe(200);
      expect((await user()).name).toBe('Ada, edited');
      expect((await byId(adaId)).name).toBe('Ada, edited');
      await twice('/api/user', ada);
      const created = await call(service, 'POST', '/api/projects/create', { headers: ada, body: { projectName: 'Kept, second' } });
      expect(created.status).toBe(200);
      expect((await user()).projects.map((p) => p.id)).toContain(Number(created.body.id));
      const projects = (await call(service, 'GET', '/api/user/projects', { headers: ada })).body.projects as { id: number }[];
      expect(projects.map((p) => p.id)).toContain(Number(created.body.id));
      // Another user's answer is their own, kept or not.
      expect(((await twice('/api/user', { 'x-jwt-token': bobToken })).body as { username: string }).username).toBe('bob');
    });

    it('refuses a revoked key at once', async () => {
      const added = await call(service, 'POST', `/api/${projectId}/apikeys`, { headers: ada, body: { name: 'second', role: 'admin', isDevelopmentKey: false } });
      expect(added.status).toBe(200);
      const second = { 'x-api-key': String(added.body.apiKey) };
      expect((await twice(`/api/${projectId}`, second)).status).toBe(200);
      const revoked = await call(service, 'DELETE', `/api/${projectId}/apikeys/${Number(added.body.id)}`, { headers: ada });
      expect(revoked.status).toBe(200);
      const refused = await info(second);
      expect(refused.status).toBe(401);
    });

    it('refuses a key whose time to live ended, with nothing else changed', async () => {
      const added = await call(service, 'POST', `/api/${projectId}/apikeys`, { headers: ada, body: { name: 'brief', role: 'readonly', isDevelopmentKey: false, ttl: 1 } });
      expect(added.status).toBe(200);
      const brief = { 'x-api-key': String(added.body.apiKey) };
      expect((await twice(`/api/${projectId}`, brief)).status).toBe(200);
      await sleep(1100);
      expect((await info(brief)).status).toBe(401);
    });

    it('refuses a removed collaborator at once, and lists the project no more', async () => {
      const bob = { 'x-jwt-token': bobToken };
      expect((await twice(`/api/${projectId}`, bob)).status).toBe(200);
      const listedBefore = await twice('/api/projects', bob);
      expect((listedBefore.body.projects as { id: number }[]).map((p) => p.id)).toContain(projectId);
      const removed = await call(service, 'POST', `/api/${projectId}/collaborators/remove`, { headers: ada, body: { usernameOrEmail: 'bob' } });
      expect(removed.status).toBe(200);
      expect((await info(bob)).status).toBe(403);
      const listedAfter = await call(service, 'GET', '/api/projects', { headers: bob });
      expect((listedAfter.body.projects as { id: number }[]).map((p) => p.id)).not.toContain(projectId);
    });

    it("refuses a deleted account's token at once, where its project information was kept", async () => {
      await call(service, 'POST', '/api-user-create', { body: signup({ name: 'Carol', username: 'carol', email: 'carol@example.com' }) });
      const carol = { 'x-jwt-token': await loginToken(service, 'carol') };
      await inviteAndAccept(service, projectId, ada['x-jwt-token']!, carol['x-jwt-token'], 'carol');
      expect((await twice(`/api/${projectId}`, carol)).status).toBe(200);
      const deleted = await call(service, 'DELETE', '/api/user', { headers: carol, body: { password: 'correct horse battery' } });
      expect(deleted.status).toBe(200);
      const refused = await info(carol);
      expect(refused.status).toBe(401);
      expect(refused.body.error).toMatch(/no longer exists/);
    });

    it('ends the sessions of a changed password at once', async () => {
      const bob = { 'x-jwt-token': bobToken };
      expect((await twice('/api/projects', bob)).status).toBe(200);
      const changed = await call(service, 'POST', '/api/user/change-password', { headers: bob, body: { currentPassword: 'correct horse battery', newPassword: 'another horse battery staple' } });
      expect(changed.status).toBe(200);
      const refused = await call(service, 'GET', '/api/projects', { headers: bob });
      expect(refused.status).toBe(401);
      expect(refused.body.error).toMatch(/session has ended/);
    });
  });
}

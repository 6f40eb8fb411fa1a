// Tenant isolation and privacy over HTTP: what each key role sees of a project's people,
// cross-site writes made with the jwt cookie, collaborators who join only by accepting an
// invitation, chosen API key values that reveal nothing about other tenants, nosniff on both APIs,
// and a readme that cannot track its readers.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inviteAndAccept } from '../support/collaborators';
import { call, describeOn, registerUser, setups, startTestService, type TestService } from '../support/testService';
import { readModelsCaughtUp } from '../support/readModels';

const PUBLIC_ORIGIN = 'http://studio.test';

/** An acquisition-format sample without a signature (alg none). */
const UNSIGNED_SAMPLE = JSON.stringify({
  protected: { ver: 'v1', alg: 'none' },
  signature: '0',
  payload: { interval_ms: 10, sensors: [{ name: 'accX', units: 'm/s2' }], values: [[1], [2], [3]] },
});

const PERSONAL_FIELDS = ['lastSeen', 'jobTitle', 'companyName', 'photo'] as const;

type Json = Record<string, unknown>;

for (const setup of setups) {
  describeOn(setup, 'tenant isolation and privacy over HTTP', () => {
    let service: TestService;
    let ada: { id: number; token: string };
    let bob: { id: number; token: string };
    let carol: { id: number; token: string };
    let projectId: number;
    let adminKey: string;
    let keys: Record<'readonly' | 'ingestiononly' | 'ingestion_deployment', string>;

    const jwt = (token: string) => ({ 'x-jwt-token': token });
    const head = () => service.stores.events.headPosition();
    const addKey = async (token: string, pid: number, body: Json) => call(service, 'POST', `/api/${pid}/apikeys`, { headers: jwt(token), body: { name: 'k', isDevelopmentKey: false, ...body } });
    // Ingestion answers on durability: what follows reads the read models, so it waits for them.
    const ingest = async (apiKey: string, fileName: string) => {
      const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': fileName },
        body: UNSIGNED_SAMPLE,
      });
      await readModelsCaughtUp(service);
      return res;
    };
    const sampleCount = async () => Number((await call(service, 'GET', `/api/${projectId}/raw-data/count?category=training`, { headers: jwt(ada.token) })).body.count);
    const invitationsOf = async (token: string) => (await call(service, 'GET', '/api/user/invitations', { headers: jwt(token) })).body.invitations as Json[];
    const projectIdsOf = async (token: string) => ((await call(service, 'GET', '/api/projects', { headers: jwt(token) })).body.projects as Json[]).map((p) => p.id);

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      ada = await registerUser(service, 'ada');
      bob = await registerUser(service, 'bob', { jobTitle: 'Engineer', companyName: 'Bob & Co' });
      carol = await registerUser(service, 'carol');
      const created = await call(service, 'POST', '/api/projects/create', { headers: jwt(ada.token), body: { projectName: 'Private' } });
      projectId = Number(created.body.id);
      adminKey = String(created.body.apiKey);
      keys = {
        readonly: String((await addKey(ada.token, projectId, { role: 'readonly' })).body.apiKey),
        ingestiononly: String((await addKey(ada.token, projectId, { role: 'ingestiononly' })).body.apiKey),
        ingestion_deployment: String((await addKey(ada.token, projectId, { role: 'ingestion_deployment' })).body.apiKey),
      };
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('refuses an ingestion-only key on GET /api/projects with 403, as everywhere else on the management API', async () => {
      const res = await call(service, 'GET', '/api/projects', { headers: { 'x-api-key': keys.ingestiononly } });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ success: false, error: expect.stringMatching(/ingestiononly/) });
      expect(JSON.stringify(res.body)).not.toMatch(/ada@example.com|Private/);
    });

    it('shows an API key who collaborates, without their e-mail, last-seen time, job title, company or photo', async () => {
      await inviteAndAccept(service, projectId, ada.token, bob.token, 'bob');
      for (const key of [adminKey, keys.readonly, keys.ingestion_deployment]) {
        const listed = await call(service, 'GET', '/api/projects', { headers: { 'x-api-key': key } });
        expect(listed.status).toBe(200);
        const [project] = listed.body.projects as Json[];
        const info = (await call(service, 'GET', `/api/${projectId}`, { headers: { 'x-api-key': key } })).body;
        for (const collaborators of [project!.collaborators, (info.project as Json).collaborators, info.collaborators] as Json[][]) {
          expect(collaborators.map((c) => c.username).sort()).toEqual(['ada', 'bob']);
          for (const c of collaborators) {
            expect(c.email).toBe('');
            for (const field of PERSONAL_FIELDS) expect(c, field).not.toHaveProperty(field);
          }
        }
        expect(info).not.toHaveProperty('collaboratorInvitations');
        expect(JSON.stringify(info)).not.toMatch(/@example\.com|Engineer|Bob & Co/);
      }
    });

    it('shows collaborators, logged in themselves, each other in full', async () => {
      const info = (await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada.token) })).body;
      const seen = (info.collaborators as Json[]).find((c) => c.username === 'bob')!;
      expect(seen).toMatchObject({ email: 'bob@example.com', jobTitle: 'Engineer', companyName: 'Bob & Co', lastSeen: expect.any(String) });
    });

    it('refuses a change posted from another site with the jwt cookie, and appends nothing', async () => {
      expect((await ingest(adminKey, 'one.json')).status).toBe(200);
      const before = await head();
      const cookie = { cookie: `jwt=${ada.token}` };
      const attempts: Record<string, string>[] = [
        { ...cookie, origin: 'https://evil.example' },
        { ...cookie, origin: 'null' },
        { ...cookie, referer: 'https://evil.example/form.html' },
        // Same host name, another scheme or port: another origin.
        { ...cookie, origin: 'https://studio.test' },
        { ...cookie, origin: 'http://studio.test:8080' },
        // A form cannot be told apart from a page of ours without either header.
        cookie,
      ];
      for (const headers of attempts) {
        const res = await call(service, 'POST', `/api/${projectId}/raw-data/delete-all`, { headers });
        expect(res.status, JSON.stringify(headers)).toBe(403);
        expect(res.body).toMatchObject({ success: false, error: expect.stringMatching(/Cross-site request refused.*x-jwt-token/) });
      }
      // A cross-site Origin is not excused by a same-origin Referer.
      const mixed = await call(service, 'POST', `/api/${projectId}/raw-data/delete-all`, { headers: { ...cookie, origin: 'https://evil.example', referer: `${PUBLIC_ORIGIN}/studio` } });
      expect(mixed.status).toBe(403);
      expect(await head()).toBe(before);
      expect(await sampleCount()).toBe(1);
    });

    it("accepts a cookie change from the service's own origin or its own host, and cookie reads from anywhere", async () => {
      const cookie = { cookie: `jwt=${ada.token}` };
      const read = await call(service, 'GET', `/api/${projectId}`, { headers: { ...cookie, origin: 'https://evil.example' } });
      expect(read.status).toBe(200);
      const ownHost = new URL(service.apiUrl).origin;
      for (const headers of [
        { ...cookie, origin: PUBLIC_ORIGIN },
        { ...cookie, referer: `${PUBLIC_ORIGIN}/studio/${projectId}` },
        { ...cookie, origin: ownHost },
      ]) {
        const res = await call(service, 'POST', `/api/${projectId}/tags`, { headers, body: { tags: ['same-origin'] } });
        expect(res.status, JSON.stringify(headers)).toBe(200);
      }
      expect((await call(service, 'POST', `/api/${projectId}/raw-data/delete-all`, { headers: { ...cookie, origin: PUBLIC_ORIGIN } })).status).toBe(200);
      expect(await sampleCount()).toBe(0);
    });

    it('accepts header-token and API-key changes with no Origin, even from another site', async () => {
      expect((await call(service, 'POST', `/api/${projectId}/tags`, { headers: jwt(ada.token), body: { tags: ['header'] } })).status).toBe(200);
      expect((await call(service, 'POST', `/api/${projectId}/tags`, { headers: { ...jwt(ada.token), origin: 'https://evil.example' }, body: { tags: ['header'] } })).status).toBe(200);
      // The header wins over a cookie sent along with it.
      expect((await call(service, 'POST', `/api/${projectId}/tags`, { headers: { ...jwt(ada.token), cookie: `jwt=${ada.token}` }, body: { tags: ['both'] } })).status).toBe(200);
      expect((await call(service, 'POST', `/api/${projectId}/tags`, { headers: { 'x-api-key': adminKey }, body: { tags: ['key'] } })).status).toBe(200);
    });

    it('invites rather than adds: before accepting, the invitee has no access and the project sees only the name typed', async () => {
      const invited = await call(service, 'POST', `/api/${projectId}/collaborators/add`, { headers: jwt(ada.token), body: { usernameOrEmail: 'carol@example.com' } });
      expect(invited.status).toBe(200);
      const invitationId = Number(invited.body.id);
      expect(invitationId).toBeGreaterThan(0);
      // The project: the invitation with what Ada typed, and no profile of Carol's.
      const info = (await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada.token) })).body;
      expect(info.collaboratorInvitations).toEqual([{ id: invitationId, usernameOrEmail: 'carol@example.com', invited: expect.any(String), invitedBy: { id: ada.id, username: 'ada' } }]);
      expect((info.collaborators as Json[]).map((c) => c.username)).not.toContain('carol');
      expect(JSON.stringify(info)).not.toMatch(/"carol"/);
      // Carol: not in her lists, no access, but the invitation waits for her.
      expect(await projectIdsOf(carol.token)).not.toContain(projectId);
      expect(((await call(service, 'GET', '/api/user/projects', { headers: jwt(carol.token) })).body.projects as Json[]).map((p) => p.id)).not.toContain(projectId);
      expect((await call(service, 'GET', `/api/${projectId}`, { headers: jwt(carol.token) })).status).toBe(403);
      expect((await call(service, 'GET', `/api/${projectId}/devkeys/hmac`, { headers: jwt(carol.token) })).status).toBe(403);
      expect(await invitationsOf(carol.token)).toEqual([
        { id: invitationId, projectId, projectName: 'Private', invited: expect.any(String), invitedBy: { id: ada.id, username: 'ada', name: 'Ada Lovelace' } },
      ]);
      expect(await invitationsOf(bob.token)).toEqual([]);

      // Nobody else answers for her, nor she twice.
      const before = await head();
      expect((await call(service, 'POST', `/api/user/invitations/${invitationId}/accept`, { headers: jwt(bob.token) })).status).toBe(404);
      expect((await call(service, 'POST', `/api/user/invitations/${invitationId}/accept`, { headers: { 'x-api-key': adminKey } })).status).toBe(401);
      expect(await head()).toBe(before);

      expect((await call(service, 'POST', `/api/user/invitations/${invitationId}/accept`, { headers: jwt(carol.token) })).body).toEqual({ success: true, projectId });
      expect(await projectIdsOf(carol.token)).toContain(projectId);
      const joined = (await call(service, 'GET', `/api/${projectId}`, { headers: jwt(carol.token) })).body;
      expect((joined.collaborators as Json[]).map((c) => c.username).sort()).toEqual(['ada', 'bob', 'carol']);
      expect(joined.collaboratorInvitations).toEqual([]);
      expect((await call(service, 'GET', `/api/${projectId}/devkeys/hmac`, { headers: jwt(carol.token) })).body.hmacKey).toEqual(expect.any(String));
      expect(await invitationsOf(carol.token)).toEqual([]);
      expect((await call(service, 'POST', `/api/user/invitations/${invitationId}/accept`, { headers: jwt(carol.token) })).status).toBe(404);
    });

    it('leaves a user who declines, or whose invitation is withdrawn, without access', async () => {
      const dave = await registerUser(service, 'dave');
      const invite = async () => Number((await call(service, 'POST', `/api/${projectId}/collaborators/add`, { headers: jwt(ada.token), body: { usernameOrEmail: 'dave' } })).body.id);

      const declined = await invite();
      const again = await call(service, 'POST', `/api/${projectId}/collaborators/add`, { headers: jwt(ada.token), body: { usernameOrEmail: 'dave' } });
      expect(again.status).toBe(409);
      expect(again.body.error).toBe('An invitation to "dave" already waits for an answer');
      expect((await call(service, 'POST', `/api/user/invitations/${declined}/decline`, { headers: jwt(dave.token) })).status).toBe(200);
      expect(await invitationsOf(dave.token)).toEqual([]);
      expect((await call(service, 'POST', `/api/user/invitations/${declined}/accept`, { headers: jwt(dave.token) })).status).toBe(404);
      expect((await call(service, 'GET', `/api/${projectId}`, { headers: jwt(dave.token) })).status).toBe(403);

      const withdrawn = await invite();
      expect((await call(service, 'DELETE', `/api/${projectId}/collaborators/invitations/${withdrawn}`, { headers: jwt(ada.token) })).status).toBe(200);
      expect((await call(service, 'POST', `/api/user/invitations/${withdrawn}/accept`, { headers: jwt(dave.token) })).status).toBe(404);

      // The SDK's removeCollaborator withdraws a pending invitation too.
      const removed = await invite();
      expect((await call(service, 'POST', `/api/${projectId}/collaborators/remove`, { headers: jwt(ada.token), body: { usernameOrEmail: 'dave' } })).status).toBe(200);
      expect((await call(service, 'POST', `/api/user/invitations/${removed}/accept`, { headers: jwt(dave.token) })).status).toBe(404);
      expect(await projectIdsOf(dave.token)).not.toContain(projectId);
      expect(((await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada.token) })).body.collaboratorInvitations as Json[])).toEqual([]);
    });

    it('answers alike for a name with an account and one without: inviting, the project, inviting again, removing', async () => {
      const frank = await registerUser(service, 'frank');
      const add = (usernameOrEmail: string) => call(service, 'POST', `/api/${projectId}/collaborators/add`, { headers: jwt(ada.token), body: { usernameOrEmail } });
      const known = await add('frank');
      const unknown = await add('no-such-person@example.com');
      expect([known.status, unknown.status]).toEqual([200, 200]);
      expect(Object.keys(known.body).sort()).toEqual(Object.keys(unknown.body).sort());
      expect(Number(unknown.body.id)).toBeGreaterThan(0);
      const shown = ((await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada.token) })).body.collaboratorInvitations as Json[]).map((i) => i.usernameOrEmail);
      expect(shown).toEqual(expect.arrayContaining(['frank', 'no-such-person@example.com']));
      // The same name again: the same refusal for both.
      const [knownAgain, unknownAgain] = [await add('frank'), await add('No-Such-Person@example.com')];
      expect([knownAgain.status, unknownAgain.status]).toEqual([409, 409]);
      expect(knownAgain.body.error).toBe('An invitation to "frank" already waits for an answer');
      expect(unknownAgain.body.error).toBe('An invitation to "No-Such-Person@example.com" already waits for an answer');
      // Frank under his e-mail address: a second invitation, as for any name not yet invited.
      expect((await add('frank@example.com')).status).toBe(200);
      // Removing names only what the project sees; anyone else, account or not, gets one 404.
      const remove = (usernameOrEmail: string) => call(service, 'POST', `/api/${projectId}/collaborators/remove`, { headers: jwt(ada.token), body: { usernameOrEmail } });
      await registerUser(service, 'grace');
      const [withAccount, without] = [await remove('grace'), await remove('nobody-at-all')];
      expect([withAccount.status, without.status]).toEqual([404, 404]);
      expect(withAccount.body.error).toBe('No collaborator or pending invitation named "grace" in this project');
      expect(without.body.error).toBe('No collaborator or pending invitation named "nobody-at-all" in this project');
      expect((await remove('no-such-person@example.com')).status).toBe(200);
      // Accepting one of Frank's invitations answers both; nobody can accept the other name's.
      expect(await invitationsOf(frank.token)).toHaveLength(2);
      expect((await call(service, 'POST', `/api/user/invitations/${String(known.body.id)}/accept`, { headers: jwt(frank.token) })).status).toBe(200);
      expect(await invitationsOf(frank.token)).toEqual([]);
      expect(((await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada.token) })).body.collaboratorInvitations as Json[])).toEqual([]);
      expect((await remove('frank')).status).toBe(200);
    });

    it("drops a deleted account's invitation from the list, and its name can be invited again (its typed name was sealed with the account)", async () => {
      const henry = await registerUser(service, 'henry');
      const add = (usernameOrEmail: string) => call(service, 'POST', `/api/${projectId}/collaborators/add`, { headers: jwt(ada.token), body: { usernameOrEmail } });
      expect((await add('henry')).status).toBe(200);
      expect((await call(service, 'DELETE', '/api/user', { headers: jwt(henry.token), body: { password: 'correct horse battery' } })).status).toBe(200);
      const listed = () => call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada.token) }).then((r) => (r.body.collaboratorInvitations as Json[]).map((i) => i.usernameOrEmail));
      expect(await listed()).not.toContain('henry');
      // The same name again is a new invitation (to nobody now), which the project lists and can withdraw.
      expect((await add('henry')).status).toBe(200);
      expect(await listed()).toContain('henry');
      expect((await call(service, 'POST', `/api/${projectId}/collaborators/remove`, { headers: jwt(ada.token), body: { usernameOrEmail: 'henry' } })).status).toBe(200);
      expect(await listed()).not.toContain('henry');
    });

    it('lets no API key invite, and a key revoked later never mattered', async () => {
      const erin = await registerUser(service, 'erin');
      const before = await head();
      for (const key of [adminKey, keys.readonly, keys.ingestion_deployment, keys.ingestiononly]) {
        const res = await call(service, 'POST', `/api/${projectId}/collaborators/add`, { headers: { 'x-api-key': key }, body: { usernameOrEmail: 'erin' } });
        expect(res.status).toBe(403);
      }
      const byAdmin = await call(service, 'POST', `/api/${projectId}/collaborators/add`, { headers: { 'x-api-key': adminKey }, body: { usernameOrEmail: 'erin' } });
      expect(byAdmin.body.error).toMatch(/JWT/);
      expect(await head()).toBe(before);
      expect(await invitationsOf(erin.token)).toEqual([]);

      // A person invites; revoking the project's key has no bearing on the invitee's answer.
      const invitationId = Number((await call(service, 'POST', `/api/${projectId}/collaborators/add`, { headers: jwt(ada.token), body: { usernameOrEmail: 'erin' } })).body.id);
      const keyList = (await call(service, 'GET', `/api/${projectId}/apikeys`, { headers: jwt(ada.token) })).body.apiKeys as Json[];
      const adminKeyId = keyList.find((k) => k.isDevelopmentKey)!.id;
      expect((await call(service, 'DELETE', `/api/${projectId}/apikeys/${String(adminKeyId)}`, { headers: jwt(ada.token) })).status).toBe(200);
      expect((await call(service, 'POST', `/api/user/invitations/${invitationId}/accept`, { headers: jwt(erin.token) })).status).toBe(200);
      expect((await call(service, 'GET', `/api/${projectId}`, { headers: jwt(erin.token) })).status).toBe(200);
    });

    it('answers one neutral 400 for a chosen key value any project ever had, appending nothing', async () => {
      const mallory = await registerUser(service, 'mallory');
      const other = await call(service, 'POST', '/api/projects/create', { headers: jwt(mallory.token), body: { projectName: 'Elsewhere' } });
      const otherId = Number(other.body.id);
      const generated = String(other.body.apiKey);
      const chosenLive = 'ei_chosen_by_mallory_0123456789abcdef';
      const chosenRevoked = 'ei_revoked_by_mallory_0123456789abcdef';
      expect((await addKey(mallory.token, otherId, { role: 'admin', apiKey: chosenLive })).status).toBe(200);
      const revoked = await addKey(mallory.token, otherId, { role: 'admin', apiKey: chosenRevoked });
      expect((await call(service, 'DELETE', `/api/${otherId}/apikeys/${String(revoked.body.id)}`, { headers: jwt(mallory.token) })).status).toBe(200);
      const generatedRevoked = String((await addKey(mallory.token, otherId, { role: 'readonly' })).body.apiKey);
      const generatedRevokedId = ((await call(service, 'GET', `/api/${otherId}/apikeys`, { headers: jwt(mallory.token) })).body.apiKeys as Json[]).find((k) => k.role === 'readonly')!.id;
      expect((await call(service, 'DELETE', `/api/${otherId}/apikeys/${String(generatedRevokedId)}`, { headers: jwt(mallory.token) })).status).toBe(200);

      const before = await head();
      const answers = [];
      // Another project's live, revoked, generated and chosen values; this project's own old key; and a malformed value.
      for (const value of [generated, chosenLive, chosenRevoked, generatedRevoked, adminKey, 'ei_short']) {
        const res = await addKey(ada.token, projectId, { role: 'admin', apiKey: value });
        expect(res.status, value).toBe(400);
        answers.push(res.body);
      }
      expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
      expect(answers[0]).toEqual({ success: false, error: expect.stringMatching(/^"apiKey": this value cannot be used as an API key/) });
      expect(String(answers[0]!.error)).not.toMatch(/another project|in use|exists/i);
      expect(await head()).toBe(before);
      // The other tenant's keys still work, and only for their project.
      expect((await call(service, 'GET', `/api/${otherId}`, { headers: { 'x-api-key': chosenLive } })).status).toBe(200);
      expect((await call(service, 'GET', `/api/${otherId}`, { headers: { 'x-api-key': generated } })).status).toBe(200);
    });

    it('sends X-Content-Type-Options: nosniff with every answer of both APIs, refusals included', async () => {
      const answers = [
        await fetch(`${service.apiUrl}/v1/api/user`, { headers: jwt(ada.token) }),
        await fetch(`${service.apiUrl}/v1/api/user`),
        await fetch(`${service.apiUrl}/v1/no-such-route`),
        await fetch(`${service.apiUrl}/v1/openapi.json`),
        await fetch(`${service.ingestionUrl}/api/training/data`, { method: 'POST', headers: { 'x-api-key': 'ei_wrong', 'x-file-name': 'a.json' }, body: '{}' }),
        await fetch(`${service.ingestionUrl}/nowhere`),
        await ingest(keys.ingestiononly, 'two.json'),
      ];
      for (const res of answers) {
        await res.arrayBuffer();
        expect(res.headers.get('x-content-type-options'), `${res.url} ${res.status}`).toBe('nosniff');
      }
      expect(answers.map((r) => r.status)).toEqual([200, 401, 404, 200, 401, 404, 200]);
    });

    it('renders no external image in the readme (its alt text stays) and links that tell their target nothing', async () => {
      const markdown = [
        '![pixel](https://tracker.example/p.gif?who=ada)',
        '<img src="//tracker.example/q.gif" alt="raw pixel">',
        '![inline](data:image/png;base64,iVBORw0KGgo=)',
        '[docs](https://example.com/docs) [bad](javascript:alert(1))',
      ].join('\n\n');
      expect((await call(service, 'POST', `/api/${projectId}`, { headers: jwt(ada.token), body: { readme: markdown } })).status).toBe(200);
      const { html } = (await call(service, 'GET', `/api/${projectId}`, { headers: jwt(ada.token) })).body.readme as { html: string };
      expect(html).not.toContain('tracker.example');
      expect(html).toContain('pixel');
      expect(html).toContain('raw pixel');
      expect(html).toContain('<img src="data:image/png;base64,iVBORw0KGgo=" alt="inline" />');
      expect(html).toContain('<a href="https://example.com/docs" rel="noopener noreferrer nofollow">docs</a>');
      expect(html).not.toMatch(/javascript:/);
    });
  });
}

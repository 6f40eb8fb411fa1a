import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeSpec, type RouteSpec } from '../support/routeSpec';
import { signup } from '../support/signup';

/** A user's own OAuth clients over the management API (issue 27): JWT only, the secret shown once. */
describe('OAuth client registration', () => {
  let spec: RouteSpec;
  let ada: string;
  let bob: string;
  let apiKey: string;

  const login = async (username: string) => String((await spec.request('POST', '/api-login', { body: { username, password: 'correct horse battery' } })).body.token);
  const as = (token: string) => (method: string, pathname: string, body?: unknown) => spec.request(method, pathname, { headers: { 'x-jwt-token': token }, ...(body === undefined ? {} : { body }) });
  const app = { name: 'Plant dashboard', redirectUris: ['https://dash.example.com/callback', 'http://localhost:3000/cb'] };

  beforeAll(async () => {
    spec = await routeSpec();
    await spec.request('POST', '/api-user-create', { body: signup() });
    await spec.request('POST', '/api-user-create', { body: signup({ name: 'Bob', username: 'bob', email: 'bob@example.com' }) });
    ada = await login('ada');
    bob = await login('bob');
    const project = await as(ada)('POST', '/api/projects/create', { projectName: 'Keys' });
    apiKey = String((await as(ada)('POST', `/api/${Number(project.body.id)}/apikeys`, { name: 'CI', role: 'admin' })).body.apiKey);
  });
  afterAll(async () => {
    await spec?.close();
  });

  it('registers a client, answers its secret once, lists it without secrets, and deletes it for its owner', async () => {
    await spec.mark();
    const created = await as(ada)('POST', '/api/oauth/clients', app);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ success: true, clientId: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/), clientSecret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    const { clientId, clientSecret } = created.body as { clientId: string; clientSecret: string };
    const appended = await spec.appended();
    expect(appended.map((e) => e.type)).toEqual(['OAuthClientRegistered']);
    expect(JSON.stringify(appended.map((e) => ({ data: e.data, metadata: e.metadata })))).not.toContain(clientSecret);

    const listed = await as(ada)('GET', '/api/oauth/clients');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ success: true, clients: [{ clientId, name: app.name, redirectUris: app.redirectUris, registered: expect.any(String) }] });
    expect((await as(bob)('GET', '/api/oauth/clients')).body).toEqual({ success: true, clients: [] });

    await spec.mark();
    const byBob = await as(bob)('DELETE', `/api/oauth/clients/${clientId}`);
    expect(byBob.status).toBe(404);
    expect(await spec.appended()).toEqual([]);

    expect((await as(ada)('DELETE', `/api/oauth/clients/${clientId}`)).body).toEqual({ success: true });
    expect((await as(ada)('GET', '/api/oauth/clients')).body).toEqual({ success: true, clients: [] });
    expect((await as(ada)('DELETE', `/api/oauth/clients/${clientId}`)).status).toBe(404);
  });

  it('holds at most 25 clients per user: the next is refused with nothing appended until one is deleted', async () => {
    const carol = signup({ name: 'Carol', username: 'carol', email: 'carol@example.com' });
    await spec.request('POST', '/api-user-create', { body: carol });
    const token = await login('carol');
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      const created = await as(token)('POST', '/api/oauth/clients', { ...app, name: `App ${i}` });
      expect(created.status).toBe(200);
      ids.push(String(created.body.clientId));
    }
    await spec.mark();
    const refused = await as(token)('POST', '/api/oauth/clients', app);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ success: false, error: expect.stringMatching(/25 OAuth applications.*delete one first/) });
    expect(await spec.appended()).toEqual([]);
    // Another user's count is their own.
    expect((await as(bob)('POST', '/api/oauth/clients', app)).status).toBe(200);
    await as(token)('DELETE', `/api/oauth/clients/${ids[0]}`);
    expect((await as(token)('POST', '/api/oauth/clients', app)).status).toBe(200);
  });

  it('refuses API keys and calls without credentials', async () => {
    await spec.mark();
    for (const [method, path] of [['POST', '/api/oauth/clients'], ['GET', '/api/oauth/clients'], ['DELETE', '/api/oauth/clients/Yq3x9V0pKcN2mW7tRb5sLa']] as const) {
      const withKey = await spec.request(method, path, { headers: { 'x-api-key': apiKey }, ...(method === 'POST' ? { body: app } : {}) });
      expect(withKey.status, `${method} ${path} with an API key`).toBe(401);
      expect(withKey.body.error).toMatch(/needs a JWT token/);
      expect((await spec.request(method, path, method === 'POST' ? { body: app } : {})).status, `${method} ${path} without credentials`).toBe(401);
    }
    expect(await spec.appended()).toEqual([]);
  });

  it('answers bad input with 400 naming the problem, and appends nothing', async () => {
    await spec.mark();
    const cases: [unknown, RegExp][] = [
      [{ ...app, redirectUris: ['http://dash.example.com/cb'] }, /Redirect URI 1 must use https/],
      [{ ...app, redirectUris: ['https://dash.example.com/cb#x'] }, /must not have a fragment/],
      [{ ...app, redirectUris: [] }, /at least one/],
      [{ ...app, redirectUris: 'https://dash.example.com/cb' }, /redirectUris/],
      [{ ...app, name: '' }, /name/],
      [{ ...app, name: 'a\u202Eb' }, /"name".*invisible formatting character/],
      [{ redirectUris: app.redirectUris }, /"name" is required/],
      [{ ...app, clientSecret: 'mine' }, /clientSecret/],
      [[], /body/i],
    ];
    for (const [body, message] of cases) {
      const res = await as(ada)('POST', '/api/oauth/clients', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(String(res.body.error), JSON.stringify(body)).toMatch(message);
    }
    const badId = await as(ada)('DELETE', '/api/oauth/clients/not%20an%20id');
    expect(badId.status).toBe(400);
    expect(await spec.appended()).toEqual([]);
  });
});

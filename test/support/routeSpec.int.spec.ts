import { afterEach, describe, expect, it } from 'vitest';
import { routeSpec, type RouteSpec } from './routeSpec';
import { signup } from './signup';

describe('routeSpec: the API app over in-memory stores, called without a port', () => {
  let spec: RouteSpec | undefined;
  afterEach(async () => {
    await spec?.close();
    spec = undefined;
  });

  it('answers a request through the real routes, and shows the events it appended', async () => {
    spec = await routeSpec();
    const created = await spec.request('POST', '/api-user-create', { body: signup() });
    expect(created.status).toBe(200);
    expect(created.headers['content-type']).toMatch(/^application\/json/);
    const types = (await spec.appended()).map((e) => e.type);
    expect(types).toContain('UserRegistered');

    await spec.mark();
    expect(await spec.appended()).toEqual([]);
    const refused = await spec.request('POST', '/api-user-create', { body: signup() });
    expect(refused.status).toBe(409);
    expect(await spec.appended()).toEqual([]);
  });

  it('projects given events into the read models the routes read', async () => {
    spec = await routeSpec();
    const user = await spec.request('POST', '/api-user-create', { body: signup() });
    const token = String((await spec.request('POST', '/api-login', { body: { username: 'ada', password: 'correct horse battery' } })).body.token);
    const id = Number(user.body.id);
    await spec.given(`user-${id}`, [{ type: 'UserProfileUpdated', data: { userId: id, jobTitle: 'Engineer', updated: new Date().toISOString() } }]);
    const me = await spec.request('GET', '/api/user', { headers: { 'x-jwt-token': token } });
    expect(me.status).toBe(200);
    expect(me.body.jobTitle).toBe('Engineer');
  });

  it("reads the caller's address from the socket, and lets the throttles' waits pass on a virtual clock", async () => {
    spec = await routeSpec();
    await spec.request('POST', '/api-user-create', { body: signup() });
    // Three failures on the account from anywhere: the next attempt waits 250 ms (virtual).
    for (const from of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) expect((await spec.request('POST', '/api-login', { from, body: { username: 'ada', password: 'wrong' } })).status).toBe(401);
    const before = spec.now();
    const slowed = await spec.request('POST', '/api-login', { from: '127.0.0.5', body: { username: 'ada', password: 'correct horse battery' } });
    expect(slowed.status).toBe(200);
    expect(slowed.ms).toBe(250);
    expect(spec.now() - before).toBe(250);
  });
});

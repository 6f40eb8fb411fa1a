import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNUP_CLOSED } from '../../api/routes/accountRoutes';
import { call, describeOn, setups, signup, startTestService, type TestService } from '../support/testService';

for (const setup of setups) {
  describeOn(setup, 'accounts over HTTP', () => {
    let service: TestService;
    let token: string;
    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
    });
    afterAll(async () => {
      await service?.destroy();
    });

    const head = () => service.stores.events.headPosition();

    it('creates a user and answers their id', async () => {
      const res = await call(service, 'POST', '/api-user-create', { body: signup() });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, id: expect.any(Number) });
    });

    it('logs in by username or by e-mail and answers a JWT valid for 30 days', async () => {
      for (const username of ['ada', 'ADA@example.com']) {
        const res = await call(service, 'POST', '/api-login', { body: { username, password: 'correct horse battery' } });
        expect(res.status).toBe(200);
        expect(res.body.success).toBe(true);
        token = String(res.body.token);
        const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { iat: number; exp: number };
        expect(claims.exp - claims.iat).toBe(30 * 24 * 3600);
      }
    });

    it('gives a wrong password and an unknown user one and the same error', async () => {
      const wrong = await call(service, 'POST', '/api-login', { body: { username: 'ada', password: 'wrong password' } });
      const unknown = await call(service, 'POST', '/api-login', { body: { username: 'nobody', password: 'wrong password' } });
      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      expect(wrong.body).toEqual({ success: false, error: 'Invalid username or password' });
      expect(unknown.body).toEqual(wrong.body);
    });

    it('refuses a taken username or e-mail with 409 and appends nothing', async () => {
      const before = await head();
      const sameName = await call(service, 'POST', '/api-user-create', { body: signup({ email: 'other@example.com' }) });
      expect(sameName.status).toBe(409);
      expect(sameName.body).toEqual({ success: false, error: 'Username "ada" is already taken' });
      const sameEmail = await call(service, 'POST', '/api-user-create', { body: signup({ username: 'ada2', email: 'Ada@Example.com' }) });
      expect(sameEmail.status).toBe(409);
      expect(sameEmail.body.error).toBe('An account with this e-mail address already exists');
      expect(await head()).toBe(before);
    });

    it('refuses malformed JSON, wrong types and missing fields with 400 naming the problem, appending nothing', async () => {
      const before = await head();
      const malformed = await call(service, 'POST', '/api-user-create', { rawBody: '{"name": "x",' });
      expect(malformed.status).toBe(400);
      expect(malformed.body).toEqual({ success: false, error: 'Malformed JSON in request body' });
      const wrongType = await call(service, 'POST', '/api-user-create', { body: signup({ username: 'bob', email: 'bob@example.com', privacyPolicy: 'yes' }) });
      expect(wrongType.status).toBe(400);
      expect(wrongType.body.error).toMatch(/"privacyPolicy": expected boolean/);
      const missing = await call(service, 'POST', '/api-user-create', { body: { name: 'Bob', username: 'bob', privacyPolicy: true, turnstileResponse: 'x' } });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toBe('Invalid request body: "email" is required');
      const badName = await call(service, 'POST', '/api-user-create', { body: signup({ username: 'bob smith', email: 'bob@example.com' }) });
      expect(badName.status).toBe(400);
      expect(badName.body.error).toMatch(/Username must be/);
      const noPolicy = await call(service, 'POST', '/api-user-create', { body: signup({ username: 'bob', email: 'bob@example.com', privacyPolicy: false }) });
      expect(noPolicy.status).toBe(400);
      expect(noPolicy.body.error).toMatch(/privacy policy/);
      const shortPassword = await call(service, 'POST', '/api-login', { body: { username: 'ada' } });
      expect(shortPassword.status).toBe(400);
      expect(shortPassword.body.error).toBe('Invalid request body: "password" is required');
      expect(await head()).toBe(before);
    });

    it('answers the current user with every required field of GetUserResponse', async () => {
      const res = await call(service, 'GET', '/api/user', { headers: { 'x-jwt-token': token } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        id: expect.any(Number),
        username: 'ada',
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        // The installation's first user is staff.
        staffInfo: { isStaff: true, hasSudoRights: false },
        permissions: expect.arrayContaining(['users:emails:read']),
        pending: false,
        activated: false,
        mfaConfigured: false,
        tier: 'free',
        organizations: [],
        experiments: expect.arrayContaining([expect.objectContaining({ type: 'dark-mode', enabled: false, showToUser: true })]),
        suspended: false,
        notifications: ['welcome', 'activate-account'],
        passwordConfigured: true,
        projectsSortOrder: 'created-desc',
        hasEnterpriseFeaturesAccess: false,
        lastAccessedProjects: { projects: [expect.objectContaining({ name: 'ada-project-1' })], hasMoreProjects: false },
        privatePersonalProjectsUsed: 1,
        eulas: [expect.objectContaining({ name: 'brainchip', userIsCompliant: false }), expect.objectContaining({ name: 'syntiant' })],
      });
      expect(res.body.projects).toEqual([expect.objectContaining({ name: 'ada-project-1', owner: 'Ada Lovelace' })]);
      const excluded = await call(service, 'GET', '/api/user?excludeProjects=true', { headers: { 'x-jwt-token': token } });
      expect(excluded.body.projects).toEqual([]);
    });

    it('accepts the JWT from the jwt cookie; as a Bearer it is no OAuth access token', async () => {
      const cookie = await call(service, 'GET', '/api/user/projects', { headers: { cookie: `jwt=${token}` } });
      expect(cookie.status).toBe(200);
      expect(cookie.body.projects).toHaveLength(1);
      const bearer = await call(service, 'GET', '/api/projects', { headers: { authorization: `Bearer ${token}` } });
      expect(bearer.status).toBe(401);
      expect(bearer.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    });

    it('refuses a missing, forged or expired token with 401', async () => {
      const none = await call(service, 'GET', '/api/user');
      expect(none.status).toBe(401);
      expect(none.body.success).toBe(false);
      const [h, p] = token.split('.');
      const forged = await call(service, 'GET', '/api/user', { headers: { 'x-jwt-token': `${h}.${p}.${'A'.repeat(43)}` } });
      expect(forged).toMatchObject({ status: 401, body: { success: false, error: 'Invalid token' } });
      const garbage = await call(service, 'GET', '/api/user', { headers: { 'x-jwt-token': 'not-a-token' } });
      expect(garbage.status).toBe(401);
    });

    it('refuses an API key and a bearer token on operations that take a JWT only', async () => {
      const created = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Keys' } });
      const apiKey = String(created.body.apiKey);
      const withKey = await call(service, 'GET', '/api/user', { headers: { 'x-api-key': apiKey } });
      expect(withKey.status).toBe(401);
      expect(withKey.body.error).toMatch(/needs a JWT token/);
      const withBearer = await call(service, 'GET', '/api/user', { headers: { authorization: `Bearer ${token}` } });
      expect(withBearer.status).toBe(401);
    });

    it('answers unknown endpoints and methods with a JSON error', async () => {
      const unknown = await call(service, 'GET', '/api/no/such/thing/here');
      expect(unknown.status).toBe(404);
      expect(unknown.body.success).toBe(false);
      const method = await call(service, 'DELETE', '/api-login');
      expect(method.status).toBe(405);
      expect(method.body.success).toBe(false);
    });

    it('keeps personal data out of the log in clear and records who did what', async () => {
      const raw = [];
      // The sealing decorator wraps the raw store; read beneath it.
      const inner = (service.stores.events as unknown as { inner: { readAll(): AsyncIterable<{ type: string; data: Record<string, unknown>; metadata: Record<string, unknown> }> } }).inner;
      for await (const e of inner.readAll()) raw.push(e);
      const text = JSON.stringify(raw, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
      expect(text).not.toContain('ada@example.com');
      expect(text).not.toContain('Ada Lovelace');
      expect(text).not.toContain('correct horse battery');
      const registered = raw.find((e) => e.type === 'UserRegistered')!;
      expect(String(registered.data.email)).toMatch(/^sealed:v1:/);
      expect(String(registered.data.passwordHash)).toMatch(/^scrypt\$/);
      expect(registered.metadata).toMatchObject({ actor: 'anonymous', correlationId: expect.any(String), time: expect.any(String) });
    });

    it('echoes the request id and uses it as the correlation id of the events', async () => {
      const res = await call(service, 'POST', '/api/projects/create', {
        headers: { 'x-jwt-token': token, 'x-request-id': 'req-correlate-1' },
        body: { projectName: 'Correlated' },
      });
      expect(res.headers.get('x-request-id')).toBe('req-correlate-1');
      const events = await service.stores.events.readStream(`project-${String(res.body.id)}`);
      expect(events.map((e) => e.metadata.correlationId)).toEqual(['req-correlate-1', 'req-correlate-1', 'req-correlate-1', 'req-correlate-1']);
      expect(events[0]!.metadata.actor).toMatch(/^user:\d+$/);
    });
  });
}

describe('sign-up turned off', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ mongo: false, env: { SIGNUP_ENABLED: 'false' } });
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('answers that creating users is no longer publicly available, and appends nothing', async () => {
    const res = await call(service, 'POST', '/api-user-create', { body: signup() });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: SIGNUP_CLOSED });
    expect(await service.stores.events.headPosition()).toBeUndefined();
  });
});

// The job websocket's token: signed with the service secret, short-lived, bound to the caller and
// one project, and never interchangeable with a session (login) token in either direction.
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../api/auth/tokens';
import { SOCKET_TOKEN_LIFETIME_SECONDS } from '../../api/socket/socketTokens';
import { call, registerUser, startTestService, type TestService } from '../support/testService';

const SECRET = 'a-test-secret-that-is-long-enough-0123456789';
const key = new TextEncoder().encode(SECRET);
const now = new Date('2026-03-01T12:00:00Z');

describe('socket tokens', () => {
  const tokens = new TokenService(SECRET);
  const socket = tokens.socket;

  it('carry the caller and the project, and expire ten minutes after issue', async () => {
    const issued = await socket.issue({ kind: 'user', userId: 7, sessionVersion: 2 }, 42, now);
    expect(issued.expires.getTime() - now.getTime()).toBe(SOCKET_TOKEN_LIFETIME_SECONDS * 1000);
    expect(SOCKET_TOKEN_LIFETIME_SECONDS).toBe(600);
    expect(await socket.verify(issued.socketToken, now)).toEqual({ caller: { kind: 'user', userId: 7, sessionVersion: 2 }, projectId: 42, expires: issued.expires });
    const byKey = await socket.issue({ kind: 'apiKey', apiKeyId: 3 }, 9, now);
    expect(await socket.verify(byKey.socketToken, now)).toEqual({ caller: { kind: 'apiKey', apiKeyId: 3 }, projectId: 9, expires: byKey.expires });
  });

  it("carry a user's session version, and only a user's", async () => {
    const issued = await socket.issue({ kind: 'user', userId: 7, sessionVersion: 2 }, 42, now);
    expect(decodeJwt(issued.socketToken)).toMatchObject({ sub: 'user:7', sv: 2 });
    expect(decodeJwt((await socket.issue({ kind: 'apiKey', apiKeyId: 3 }, 42, now)).socketToken).sv).toBeUndefined();
    const sign = (subject: string, claims: Record<string, unknown>) =>
      new SignJWT({ pid: 42, ...claims })
        .setProtectedHeader({ alg: 'HS256', typ: 'socket+jwt' })
        .setSubject(subject)
        .setIssuer('edge-ml-service')
        .setAudience('job-socket')
        .setIssuedAt(now)
        .setExpirationTime(new Date(now.getTime() + 60_000))
        .sign(key);
    // A user's token without its session (issued before sessions were recorded) holds no grant.
    expect(await socket.verify(await sign('user:7', {}), now)).toEqual({ invalid: 'Invalid socket token' });
    expect(await socket.verify(await sign('user:7', { sv: '2' }), now)).toEqual({ invalid: 'Invalid socket token' });
    expect(await socket.verify(await sign('user:7', { sv: -1 }), now)).toEqual({ invalid: 'Invalid socket token' });
    expect(await socket.verify(await sign('apikey:3', { sv: 0 }), now)).toEqual({ invalid: 'Invalid socket token' });
  });

  it('live as long as the service says (SOCKET_TOKEN_TTL_SECONDS)', async () => {
    const short = new TokenService(SECRET, { socketTokenLifetimeSeconds: 5 }).socket;
    const issued = await short.issue({ kind: 'apiKey', apiKeyId: 3 }, 42, now);
    expect(issued.expires.getTime() - now.getTime()).toBe(5_000);
    expect(await short.verify(issued.socketToken, new Date(now.getTime() + 6_000))).toEqual({ invalid: 'Socket token has expired, get a new one' });
  });

  it("carry an organization instead of a project for an organization's jobs, never both", async () => {
    const byOrgKey = await socket.issue({ kind: 'organizationKey', apiKeyId: 5 }, { organizationId: 12 }, now);
    expect(await socket.verify(byOrgKey.socketToken, now)).toEqual({ caller: { kind: 'organizationKey', apiKeyId: 5 }, organizationId: 12, expires: byOrgKey.expires });
    // Signed right, but naming both scopes (or neither): refused.
    const sign = (claims: Record<string, number>) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'socket+jwt' })
        .setSubject('orgkey:5')
        .setIssuer('edge-ml-service')
        .setAudience('job-socket')
        .setIssuedAt(now)
        .setExpirationTime(new Date(now.getTime() + 60_000))
        .sign(new TextEncoder().encode(SECRET));
    expect(await socket.verify(await sign({ oid: 12 }), now)).toHaveProperty('organizationId', 12);
    expect(await socket.verify(await sign({ oid: 12, pid: 12 }), now)).toEqual({ invalid: 'Invalid socket token' });
    expect(await socket.verify(await sign({}), now)).toEqual({ invalid: 'Invalid socket token' });
  });

  it('are refused once expired', async () => {
    const { socketToken } = await socket.issue({ kind: 'user', userId: 7, sessionVersion: 2 }, 42, now);
    const justBefore = new Date(now.getTime() + SOCKET_TOKEN_LIFETIME_SECONDS * 1000 - 1000);
    expect(await socket.verify(socketToken, justBefore)).toHaveProperty('projectId', 42);
    const after = new Date(now.getTime() + SOCKET_TOKEN_LIFETIME_SECONDS * 1000 + 1000);
    expect(await socket.verify(socketToken, after)).toEqual({ invalid: 'Socket token has expired, get a new one' });
  });

  it('are refused with a changed payload, a changed signature or another secret', async () => {
    const { socketToken } = await socket.issue({ kind: 'user', userId: 7, sessionVersion: 2 }, 42, now);
    const [header, payload, signature] = socketToken.split('.') as [string, string, string];
    // The same claims for another project, with the original signature.
    const otherProject = Buffer.from(JSON.stringify({ ...decodeJwt(socketToken), pid: 43 })).toString('base64url');
    expect(await socket.verify(`${header}.${otherProject}.${signature}`, now)).toEqual({ invalid: 'Invalid socket token' });
    const flipped = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11);
    expect(await socket.verify(`${header}.${payload}.${flipped}`, now)).toEqual({ invalid: 'Invalid socket token' });
    const stranger = new TokenService('another-secret-that-is-long-enough-9876543210').socket;
    expect(await stranger.verify(socketToken, now)).toEqual({ invalid: 'Invalid socket token' });
    // alg none, garbage and oversized input.
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'socket+jwt' })).toString('base64url')}.${payload}.`;
    expect(await socket.verify(unsigned, now)).toEqual({ invalid: 'Invalid socket token' });
    expect(await socket.verify('not a token', now)).toEqual({ invalid: 'Invalid socket token' });
    expect(await socket.verify('', now)).toEqual({ invalid: 'Invalid socket token' });
    expect(await socket.verify('a'.repeat(100_000), now)).toEqual({ invalid: 'Invalid socket token' });
  });

  it('need the socket audience and type: a login token is not a socket token', async () => {
    const login = await tokens.issue(7, 0, new Date());
    expect(await tokens.verify(login)).toHaveProperty('userId', 7);
    expect(await socket.verify(login)).toEqual({ invalid: 'Invalid socket token' });
    // A token with the socket type but another audience (or none), signed with the right secret.
    const sign = (audience: string | undefined) => {
      const jwt = new SignJWT({ pid: 42, sv: 0 }).setProtectedHeader({ alg: 'HS256', typ: 'socket+jwt' }).setSubject('user:7').setIssuer('edge-ml-service').setIssuedAt(now).setExpirationTime(new Date(now.getTime() + 60_000));
      return (audience ? jwt.setAudience(audience) : jwt).sign(key);
    };
    expect(await socket.verify(await sign('job-socket'), now)).toHaveProperty('projectId', 42);
    expect(await socket.verify(await sign('something-else'), now)).toEqual({ invalid: 'Invalid socket token' });
    expect(await socket.verify(await sign(undefined), now)).toEqual({ invalid: 'Invalid socket token' });
  });

  it('are never accepted as a login token', async () => {
    const { socketToken } = await socket.issue({ kind: 'user', userId: 7, sessionVersion: 2 }, 42, new Date());
    expect(decodeProtectedHeader(socketToken).typ).toBe('socket+jwt');
    expect(decodeJwt(socketToken).aud).toBe('job-socket');
    expect(await tokens.verify(socketToken)).toEqual({ invalid: 'Invalid token' });
    // Even one made to look like a session (a session version, the login type) keeps its audience.
    const lookalike = await new SignJWT({ sv: 0, pid: 42 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject('7')
      .setIssuer('edge-ml-service')
      .setAudience('job-socket')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key);
    expect(await tokens.verify(lookalike)).toEqual({ invalid: 'Invalid token' });
  });
});

describe('GET /api/{projectId}/socket-token', () => {
  let service: TestService;
  let ada: { id: number; token: string };
  let bob: { id: number; token: string };
  let projectId: number;
  let apiKey: string;
  let otherProjectKey: string;

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    await registerUser(service, 'staffer');
    ada = await registerUser(service, 'ada');
    bob = await registerUser(service, 'bob');
    const created = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': ada.token }, body: { projectName: 'Sockets' } });
    projectId = Number(created.body.id);
    apiKey = String(created.body.apiKey);
    otherProjectKey = String((await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': bob.token }, body: { projectName: 'Other' } })).body.apiKey);
  });
  afterAll(async () => {
    await service?.destroy();
  });

  const verify = (token: string) => new TokenService('unused-secret-that-is-long-enough-00000000').socket.verify(token);

  it("gives a collaborator a token bound to them and the project, answered in the SDK's shape", async () => {
    const before = Date.now();
    const res = await call(service, 'GET', `/api/${projectId}/socket-token`, { headers: { 'x-jwt-token': ada.token } });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const token = res.body.token as { socketToken: string; expires: string };
    expect(Object.keys(token).sort()).toEqual(['expires', 'socketToken']);
    expect(token.expires).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const lifetime = Date.parse(token.expires) - before;
    expect(lifetime).toBeGreaterThan(590_000);
    expect(lifetime).toBeLessThanOrEqual(601_000);
    const claims = decodeJwt(token.socketToken);
    expect(claims).toMatchObject({ sub: `user:${ada.id}`, sv: 0, pid: projectId, aud: 'job-socket' });
    // Signed with the service's own secret, not any other.
    expect(await verify(token.socketToken)).toEqual({ invalid: 'Invalid socket token' });
  });

  it('gives an API key of the project a token bound to that key', async () => {
    const res = await call(service, 'GET', `/api/${projectId}/socket-token`, { headers: { 'x-api-key': apiKey } });
    expect(res.status).toBe(200);
    expect(decodeJwt((res.body.token as { socketToken: string }).socketToken)).toMatchObject({ sub: expect.stringMatching(/^apikey:\d+$/), pid: projectId });
  });

  it('refuses strangers, other projects and anonymous callers', async () => {
    expect((await call(service, 'GET', `/api/${projectId}/socket-token`, { headers: { 'x-jwt-token': bob.token } })).status).toBe(403);
    expect((await call(service, 'GET', `/api/${projectId}/socket-token`, { headers: { 'x-api-key': otherProjectKey } })).status).toBe(403);
    expect((await call(service, 'GET', `/api/${projectId}/socket-token`)).status).toBe(401);
    expect((await call(service, 'GET', `/api/999999/socket-token`, { headers: { 'x-jwt-token': ada.token } })).status).toBe(404);
  });

  it('hands out tokens that do not log in', async () => {
    const socketToken = ((await call(service, 'GET', `/api/${projectId}/socket-token`, { headers: { 'x-jwt-token': ada.token } })).body.token as { socketToken: string }).socketToken;
    const asLogin = await call(service, 'GET', '/api/user', { headers: { 'x-jwt-token': socketToken } });
    expect(asLogin.status).toBe(401);
    expect(asLogin.body.error).toBe('Invalid token');
    expect((await call(service, 'GET', `/api/${projectId}/socket-token`, { headers: { authorization: `Bearer ${socketToken}` } })).status).toBe(401);
  });
});

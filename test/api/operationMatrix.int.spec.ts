import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { Browser, ISSUER, REDIRECT } from '../support/oauthBrowser';
import { call, startTestService, type TestService, registerUser } from '../support/testService';

interface OpenApiOperation {
  operationId: string;
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, unknown> };
}

/**
 * Every operation of the OpenAPI document (built from the same table the router mounts), tried
 * with missing and wrong credentials, another user's id and a bad body. Whatever is refused
 * appends nothing.
 */
/** Operations only staff may call. */
const STAFF_OPERATIONS = ['createOrganization', 'createWhitelabel', 'updateWhitelabel'];

describe('every operation, refused the right way', () => {
  let service: TestService;
  let operations: { method: string; path: string; op: OpenApiOperation }[] = [];
  let ada: { id: number; token: string; apiKey: string; projectId: number };
  let bob: { id: number; token: string };
  let staffToken: string;
  let organizationId = 0;
  let whitelabelId = 0;

  const fill = (path: string, userId: number, projectId: number) =>
    path
      .replace('{userId}', String(userId))
      .replace('{projectId}', String(projectId))
      .replace('{organizationId}', String(organizationId))
      .replace('{usernameOrEmail}', 'nobody')
      .replace('{whitelabelIdentifier}', String(whitelabelId));

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    const register = async (username: string) => {
      return registerUser(service, username);
    };
    // The first user is staff; the two below are ordinary users.
    staffToken = (await register('staffer')).token;
    const a = await register('ada');
    // Ada's own organization: its operations reach validation.
    organizationId = Number((await call(service, 'POST', '/api/user/create-developer-profile', { headers: { 'x-jwt-token': a.token } })).body.organizationId);
    // A white label Ada's organization owns: she may set its deployment targets.
    const whitelabel = await call(service, 'POST', '/api/whitelabels', { headers: { 'x-jwt-token': staffToken }, body: { name: 'Matrix', domain: 'matrix.example.com', ownerOrganizationId: organizationId } });
    whitelabelId = Number(whitelabel.body.id);
    bob = await register('bob');
    const project = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': a.token }, body: { projectName: 'Matrix' } });
    ada = { ...a, apiKey: String(project.body.apiKey), projectId: Number(project.body.id) };
    const doc = await call(service, 'GET', '/openapi.json');
    for (const [path, methods] of Object.entries(doc.body.paths as Record<string, Record<string, OpenApiOperation>>)) {
      for (const [method, op] of Object.entries(methods)) operations.push({ method: method.toUpperCase(), path, op });
    }
  });
  afterAll(async () => {
    await service?.destroy();
  });

  const bodyFor = (method: string) => (method === 'GET' ? {} : { body: {} });
  const jwtOnly = (op: OpenApiOperation) => JSON.stringify(op.security ?? null).includes('JWTHttpHeaderAuthentication') && !JSON.stringify(op.security).includes('ApiKey');
  const needsAuth = (op: OpenApiOperation) => !(Array.isArray(op.security) && op.security.length === 0);

  it('knows the account operations of the spec', () => {
    const ids = operations.map((o) => o.op.operationId);
    for (const id of ['login', 'createUser', 'getCurrentUser', 'deleteCurrentUser', 'userSetTotpMfaKey', 'getUser', 'sendUserFeedback', 'listEnterpriseTrialsUser', 'getWhitelabelDomain', 'setUserPassword']) {
      expect(ids).toContain(id);
    }
    expect(operations.length).toBeGreaterThan(50);
  });

  it('refuses missing and forged credentials with 401 on every authenticated operation, appending nothing', async () => {
    const before = await service.stores.events.headPosition();
    for (const { method, path, op } of operations.filter((o) => needsAuth(o.op))) {
      const url = fill(path, ada.id, ada.projectId);
      const none = await call(service, method, url, bodyFor(method));
      expect(none.status, `${op.operationId} without credentials`).toBe(401);
      expect(none.body.success).toBe(false);
      const forged = await call(service, method, url, { ...bodyFor(method), headers: { 'x-jwt-token': `${ada.token.slice(0, -4)}AAAA` } });
      expect(forged.status, `${op.operationId} with a forged token`).toBe(401);
    }
    expect(await service.stores.events.headPosition()).toBe(before);
  });

  it('refuses an API key on every JWT-only operation', async () => {
    const before = await service.stores.events.headPosition();
    for (const { method, path, op } of operations.filter((o) => jwtOnly(o.op))) {
      const res = await call(service, method, fill(path, ada.id, ada.projectId), { ...bodyFor(method), headers: { 'x-api-key': ada.apiKey } });
      expect(res.status, op.operationId).toBe(401);
      expect(String(res.body.error), op.operationId).toMatch(/needs a JWT token/);
    }
    expect(await service.stores.events.headPosition()).toBe(before);
  });

  it("refuses a user acting on another user's id with 403", async () => {
    const before = await service.stores.events.headPosition();
    const byId = operations.filter((o) => o.path.includes('{userId}') && jwtOnly(o.op));
    expect(byId.length).toBeGreaterThanOrEqual(12);
    for (const { method, path, op } of byId) {
      const res = await call(service, method, fill(path, ada.id, ada.projectId), { ...bodyFor(method), headers: { 'x-jwt-token': bob.token } });
      expect(res.status, op.operationId).toBe(403);
    }
    expect(await service.stores.events.headPosition()).toBe(before);
  });

  it('opens to an OAuth token with every scope exactly the operations whose security names OAuth2; the others answer 403 insufficient_scope, appending nothing', async () => {
    const created = await call(service, 'POST', '/api/oauth/clients', { headers: { 'x-jwt-token': ada.token }, body: { name: 'Matrix app', redirectUris: [REDIRECT] } });
    const serviceFetch: client.CustomFetch = (url, options) => fetch(String(url).replace(ISSUER, service.apiUrl), options as RequestInit);
    const config = await client.discovery(new URL(ISSUER), String(created.body.clientId), undefined, client.ClientSecretBasic(String(created.body.clientSecret)), { execute: [client.allowInsecureRequests], [client.customFetch]: serviceFetch });
    config[client.customFetch] = serviceFetch;
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const scope = 'user:read projects:read organizations:read users:emails:read';
    const url = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state });
    const browser = new Browser(service.apiUrl);
    const consent = (await browser.submit((await browser.follow(url.href)).page!, { username: 'ada', password: 'correct horse battery' })).page!;
    const back = (await browser.submit(consent, {}, { name: 'decision', value: 'approve' })).callback!;
    const { access_token: token } = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });

    const before = await service.stores.events.headPosition();
    const opened: string[] = [];
    for (const { method, path, op } of operations.filter((o) => needsAuth(o.op))) {
      const res = await call(service, method, fill(path, ada.id, ada.projectId), { ...bodyFor(method), headers: { authorization: `Bearer ${token}` } });
      if (JSON.stringify(op.security ?? null).includes('OAuth2')) {
        expect(res.status, op.operationId).toBe(200);
        opened.push(op.operationId);
      } else {
        expect(res.status, op.operationId).toBe(403);
        expect(res.headers.get('www-authenticate'), op.operationId).toBe('Bearer error="insufficient_scope"');
      }
    }
    expect(opened.sort()).toEqual(['getCurrentUser', 'getCurrentUserProjects', 'getUser', 'listOrganizationsCurrentUser', 'listOrganizationsUser']);
    expect(await service.stores.events.headPosition()).toBe(before);
  });

  it('refuses a body that is not an object with 400 on every operation that takes a JSON body', async () => {
    const before = await service.stores.events.headPosition();
    const withBody = operations.filter((o) => o.op.requestBody?.content['application/json']);
    expect(withBody.length).toBeGreaterThan(20);
    for (const { method, path, op } of withBody) {
      // Staff operations are tried by staff, so that they reach validation.
      const token = STAFF_OPERATIONS.includes(op.operationId) ? staffToken : ada.token;
      const res = await call(service, method, fill(path, ada.id, ada.projectId), { rawBody: '[1, 2]', headers: { 'x-jwt-token': token } });
      expect(res.status, op.operationId).toBe(400);
      expect(String(res.body.error), op.operationId).toMatch(/^Invalid request body/);
    }
    expect(await service.stores.events.headPosition()).toBe(before);
  });
});

import { EdgeImpulseApi } from 'edge-impulse-api';
import * as client from 'openid-client';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import { Browser, ISSUER, REDIRECT } from '../support/oauthBrowser';
import { call, describeOn, loginToken, registerUser, setups, startTestService, type TestService } from '../support/testService';

const PASSWORD = 'correct horse battery';

/** Access tokens on the management API (issue 27): exactly the operations their scopes cover. */
for (const setup of setups) describeOn(setup, 'OAuth access tokens on the API', () => {
  let service: TestService;
  let config: client.Configuration;
  let ada: { id: number; token: string };
  let clientId: string;

  const serviceFetch: client.CustomFetch = (url, options) => fetch(String(url).replace(ISSUER, service.apiUrl), options as RequestInit);
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  /** Ada authorizes the application through the pages, as a browser would; the tokens it gets. */
  async function authorize(scope: string, username = 'ada', password = PASSWORD, prompt: string | null = 'consent'): Promise<client.TokenEndpointResponse> {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    // With a login_hint, which the service drops before the log (commands/oauth/oauthAdapter.ts): the flow works without it.
    const url = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, ...(prompt === null ? {} : { prompt }), login_hint: `${username}@example.com` });
    const browser = new Browser(service.apiUrl);
    const login = (await browser.follow(url.href)).page!;
    const consent = (await browser.submit(login, { username, password })).page!;
    const back = await browser.submit(consent, {}, { name: 'decision', value: 'approve' });
    return client.authorizationCodeGrant(config, back.callback!, { pkceCodeVerifier: verifier, expectedState: state });
  }

  beforeAll(async () => {
    service = await startTestService({ mongo: setup.mongo });
    ada = await registerUser(service, 'ada');
    await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': ada.token }, body: { projectName: 'Greenhouse' } });
    const created = await call(service, 'POST', '/api/oauth/clients', { headers: { 'x-jwt-token': ada.token }, body: { name: 'Dashboard', redirectUris: [REDIRECT] } });
    ({ clientId } = created.body as { clientId: string });
    config = await client.discovery(new URL(ISSUER), clientId, undefined, client.ClientSecretBasic(String(created.body.clientSecret)), { execute: [client.allowInsecureRequests], [client.customFetch]: serviceFetch });
    config[client.customFetch] = serviceFetch;
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('opens the operations its scopes name, refuses the others with insufficient_scope, and leaves e-mails out without their scope', async () => {
    const tokens = await authorize('user:read');
    const me = await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ success: true, id: ada.id, username: 'ada' });
    // No address and no field named for one (a permission's name, users:emails:read, is no address).
    expect(JSON.stringify(me.body)).not.toContain('@example.com');
    expect(JSON.stringify(me.body)).not.toMatch(/"[^"]*email[^"]*":/i);
    expect((await call(service, 'GET', `/api/users/${ada.id}`, { headers: bearer(tokens.access_token) })).status).toBe(200);
    expect((await call(service, 'GET', '/api/user/organizations', { headers: bearer(tokens.access_token) })).status).toBe(200);

    for (const [path, scope] of [['/api/user/projects', 'projects:read'], [`/api/users/${ada.id}/organizations`, 'organizations:read']] as const) {
      const refused = await call(service, 'GET', path, { headers: bearer(tokens.access_token) });
      expect(refused.status, path).toBe(403);
      expect(refused.headers.get('www-authenticate'), path).toBe(`Bearer error="insufficient_scope", scope="${scope}"`);
    }
    // Operations outside the table take no OAuth token at all, whatever its scopes.
    for (const [method, path] of [['GET', '/api/projects'], ['GET', '/api/oauth/clients'], ['POST', '/api/projects/create']] as const) {
      const refused = await call(service, method, path, { headers: bearer(tokens.access_token), ...(method === 'POST' ? { body: { projectName: 'By app' } } : {}) });
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(refused.headers.get('www-authenticate'), path).toBe('Bearer error="insufficient_scope"');
    }
  });

  it("works through the official SDK's OAuth2 authentication (accessToken), in and out of scope", async () => {
    const tokens = await authorize('user:read projects:read');
    const api = new EdgeImpulseApi({ endpoint: service.apiUrl });
    // The SDK's OAuth2 scheme: Authorization: Bearer <accessToken>.
    api.user.accessToken = tokens.access_token;
    api.projects.accessToken = tokens.access_token;
    const me = await api.user.getCurrentUser();
    expect(me).toMatchObject({ success: true, id: ada.id, username: 'ada' });
    expect(me.email).toBeUndefined();
    expect((await api.user.getCurrentUserProjects()).projects.map((p) => p.name)).toContain('Greenhouse');
    await expect(api.projects.listProjects()).rejects.toThrow('OAuth access tokens are not accepted by this operation: it needs a JWT token or an API key');
  });

  it("shows the grant in the person's own history, as theirs, without any token", async () => {
    const tokens = await authorize('user:read');
    const history = await call(service, 'GET', `/api/users/${ada.id}/history?type=OAuthArtifactSaved`, { headers: { 'x-jwt-token': ada.token } });
    expect(history.status).toBe(200);
    const grants = (history.body.events as { streamId: string; actor: string; data: { kind?: string } | null }[]).filter((e) => e.streamId.startsWith('oauth-grant-'));
    expect(grants.length).toBeGreaterThan(0);
    expect(grants.every((e) => e.actor === `user:${ada.id}`)).toBe(true);
    expect(JSON.stringify(history.body)).not.toContain(tokens.access_token);
  });

  it('with users:emails:read and projects:read, shows the e-mail address and the projects', async () => {
    const tokens = await authorize('user:read projects:read users:emails:read');
    const me = await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) });
    expect(me.body.email).toBe('ada@example.com');
    const projects = await call(service, 'GET', '/api/user/projects', { headers: bearer(tokens.access_token) });
    expect(projects.status).toBe(200);
    expect((projects.body.projects as { name: string }[]).map((p) => p.name)).toContain('Greenhouse');
  });

  it('a revoked, unknown or malformed token is invalid_token, never a 500; the session JWT keeps working', async () => {
    const tokens = await authorize('user:read offline_access');
    expect((await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) })).status).toBe(200);
    await client.tokenRevocation(config, tokens.refresh_token!);
    // Our own session JWT is no access token either: it goes in x-jwt-token or the jwt cookie.
    for (const token of [tokens.access_token, 'unknown-token', 'x'.repeat(5000), '%%%', 'a.b', 'a.b.c', ada.token]) {
      const refused = await call(service, 'GET', '/api/user', { headers: bearer(token) });
      expect(refused.status, token.slice(0, 20)).toBe(401);
      expect(refused.headers.get('www-authenticate'), token.slice(0, 20)).toBe('Bearer error="invalid_token"');
    }
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await call(service, 'GET', '/api/user', { headers: { 'x-jwt-token': ada.token } })).status).toBe(200);
  });

  it("ends the user's tokens at once when the password changes, refresh tokens included", async () => {
    const carol = await registerUser(service, 'carol');
    const tokens = await authorize('user:read offline_access', 'carol');
    expect((await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) })).body.username).toBe('carol');
    const changed = await call(service, 'POST', '/api/user/change-password', { headers: { 'x-jwt-token': carol.token }, body: { currentPassword: PASSWORD, newPassword: 'another fine password' } });
    expect(changed.status).toBe(200);
    const refused = await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a code used twice and revokes what the first use gave; a wrong PKCE verifier gets nothing', async () => {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'user:read', code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state });
    const browser = new Browser(service.apiUrl);
    const consent = (await browser.submit((await browser.follow(url.href)).page!, { username: 'ada', password: PASSWORD })).page!;
    const back = (await browser.submit(consent, {}, { name: 'decision', value: 'approve' })).callback!;
    await expect(client.authorizationCodeGrant(config, back, { pkceCodeVerifier: client.randomPKCECodeVerifier(), expectedState: state })).rejects.toMatchObject({ error: 'invalid_grant' });
    const first = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
    expect((await call(service, 'GET', '/api/user', { headers: bearer(first.access_token) })).status).toBe(200);
    // A replay (a stolen code) is refused, and the tokens of its first use end with their grant.
    await expect(client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state })).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await call(service, 'GET', '/api/user', { headers: bearer(first.access_token) })).status).toBe(401);
  });

  it('gives a refresh token for offline_access without prompt=consent, which plain OAuth2 clients do not send', async () => {
    const tokens = await authorize('user:read offline_access', 'ada', PASSWORD, null);
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect((await call(service, 'GET', '/api/user', { headers: bearer(refreshed.access_token) })).status).toBe(200);
  });

  it('keeps grants and tokens across a restart: they live in the log', async () => {
    const tokens = await authorize('user:read offline_access');
    service = await service.restart();
    expect((await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) })).status).toBe(200);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect((await call(service, 'GET', '/api/user', { headers: bearer(refreshed.access_token) })).status).toBe(200);
  });

  it('revoking the access token alone ends its refresh token too (the whole grant)', async () => {
    const tokens = await authorize('user:read offline_access');
    await client.tokenRevocation(config, tokens.access_token);
    expect((await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) })).status).toBe(401);
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it("refuses to let another application revoke a token it was not given (RFC 7009), and the token lives on", async () => {
    const tokens = await authorize('user:read offline_access');
    const other = await call(service, 'POST', '/api/oauth/clients', { headers: { 'x-jwt-token': ada.token }, body: { name: 'Other', redirectUris: [REDIRECT] } });
    const otherConfig = await client.discovery(new URL(ISSUER), String(other.body.clientId), undefined, client.ClientSecretBasic(String(other.body.clientSecret)), { execute: [client.allowInsecureRequests], [client.customFetch]: serviceFetch });
    otherConfig[client.customFetch] = serviceFetch;
    for (const token of [tokens.access_token, tokens.refresh_token!]) {
      await expect(client.tokenRevocation(otherConfig, token)).rejects.toMatchObject({ error: 'invalid_request', error_description: 'client is not authorized to revoke the presented token' });
    }
    expect((await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) })).status).toBe(200);
    expect((await client.refreshTokenGrant(config, tokens.refresh_token!)).access_token).toEqual(expect.any(String));
  });

  it("ends a deleted account's tokens", async () => {
    const dave = await registerUser(service, 'dave');
    const tokens = await authorize('user:read offline_access', 'dave');
    expect((await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) })).status).toBe(200);
    expect((await call(service, 'DELETE', '/api/user', { headers: { 'x-jwt-token': dave.token }, body: { password: PASSWORD } })).status).toBe(200);
    expect((await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) })).status).toBe(401);
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it("refuses a suspended user's tokens at once, and takes them again once the suspension is lifted", async () => {
    await registerUser(service, 'sue');
    const sue = (await call(service, 'GET', '/api/user', { headers: { 'x-jwt-token': await loginToken(service, 'sue') } })).body.id as number;
    const tokens = await authorize('user:read offline_access', 'sue');
    expect((await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) })).status).toBe(200);
    // No operation suspends a user (the spec has none): the users read model's flag is set by hand,
    // as a suspension's projection would. Without a suspension event no saga revokes the grant
    // (docs/oauth.md, "Ending access"), so lifting the flag opens the same tokens again.
    const users = service.stores.readStore.collection('users');
    const suspend = async (suspended: boolean) => expect((await users.updateOne({ _id: sue }, { $set: { suspended } })).matched).toBe(1);
    await suspend(true);
    try {
      const refused = await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    } finally {
      await suspend(false);
    }
    expect((await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) })).status).toBe(200);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect((await call(service, 'GET', '/api/user', { headers: bearer(refreshed.access_token) })).body.username).toBe('sue');
  });

  it("ends a deleted application's tokens at once", async () => {
    const tokens = await authorize('user:read');
    expect((await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) })).status).toBe(200);
    expect((await call(service, 'DELETE', `/api/oauth/clients/${clientId}`, { headers: { 'x-jwt-token': ada.token } })).status).toBe(200);
    expect((await call(service, 'GET', '/api/user', { headers: bearer(tokens.access_token) })).status).toBe(401);
  });

  it('records each ending in the log: grants end revoked with the cause, and a deleted account takes its own applications with it', async () => {
    const erin = await registerUser(service, 'erin');
    const frank = await registerUser(service, 'frank');
    // Frank's application, which Erin authorizes; then Erin's password changes and Frank's account goes.
    const frankApp = await call(service, 'POST', '/api/oauth/clients', { headers: { 'x-jwt-token': frank.token }, body: { name: "Frank's app", redirectUris: [REDIRECT] } });
    const frankConfig = await client.discovery(new URL(ISSUER), String(frankApp.body.clientId), undefined, client.ClientSecretBasic(String(frankApp.body.clientSecret)), { execute: [client.allowInsecureRequests], [client.customFetch]: serviceFetch });
    frankConfig[client.customFetch] = serviceFetch;
    const adaConfig = config;
    config = frankConfig;
    try {
      await authorize('user:read', 'erin');
      const since = await service.stores.events.headPosition();
      await authorize('user:read offline_access', 'erin');
      const changed = await call(service, 'POST', '/api/user/change-password', { headers: { 'x-jwt-token': erin.token }, body: { currentPassword: PASSWORD, newPassword: 'another fine password' } });
      expect(changed.status).toBe(200);
      // Given after the change: it lives on until the application goes.
      await authorize('user:read', 'erin', 'another fine password');
      expect((await call(service, 'DELETE', '/api/user', { headers: { 'x-jwt-token': frank.token }, body: { password: PASSWORD } })).status).toBe(200);

      // This application's alone: the sagas may still be ending an earlier test's grants meanwhile.
      const frankClientId = String(frankApp.body.clientId);
      const endings = async () => {
        const frankGrants = new Set<string>();
        for await (const e of service.stores.events.readAll()) {
          const data = e.data as { kind?: string; payload?: { clientId?: unknown } };
          if (e.type === 'OAuthArtifactSaved' && data.kind === 'Grant' && data.payload?.clientId === frankClientId) frankGrants.add(e.streamId);
        }
        const found: StoredEvent[] = [];
        for await (const e of service.stores.events.readAll({ after: since })) {
          if (e.type === 'OAuthArtifactEnded' && (e.data as { kind: string }).kind === 'Grant' && frankGrants.has(e.streamId)) found.push(e);
          if (e.type === 'OAuthClientDeleted' && (e.data as { clientId?: unknown }).clientId === frankClientId) found.push(e);
        }
        return found;
      };
      // Both grants Erin gave before the change, then Frank's application, then the grant given after the change.
      const expected = [
        ['OAuthArtifactEnded', 'password-changed'],
        ['OAuthArtifactEnded', 'password-changed'],
        ['OAuthClientDeleted', undefined],
        ['OAuthArtifactEnded', 'client-deleted'],
      ];
      await vi.waitFor(async () => expect((await endings()).map((e) => [e.type, (e.data as { cause?: string }).cause])).toEqual(expected), { timeout: 15_000, interval: 100 });
      const ended = await endings();
      expect(ended[0]!.metadata.actor).toBe('system:oauth-grant-endings');
      expect(ended[2]!.data).toMatchObject({ clientId: frankApp.body.clientId, ownerUserId: frank.id });
      expect(ended[2]!.metadata.actor).toBe('system:oauth-grant-endings');
      // Three grants, each ended once.
      expect(new Set(ended.filter((e) => e.type === 'OAuthArtifactEnded').map((e) => e.streamId)).size).toBe(3);
    } finally {
      config = adaConfig;
    }
  });
});

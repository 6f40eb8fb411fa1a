import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, registerUser, startTestService, type TestService } from '../support/testService';

// The test service's PUBLIC_URL (the issuer); requests to it go to the service's real address.
const ISSUER = 'http://studio.test';
const REDIRECT = 'http://localhost:3000/cb';

/** The OAuth2 authorization server on the management API's port (issue 27), driven by openid-client. */
describe('OAuth authorization server', () => {
  let service: TestService;
  let clientId: string;
  let clientSecret: string;
  let config: client.Configuration;

  // Like a resolver pointing PUBLIC_URL's host at the service.
  const toService = (url: string | URL): string => String(url).replace(ISSUER, service.apiUrl);
  const serviceFetch: client.CustomFetch = (url, options) => fetch(toService(url), options as RequestInit);
  const get = (url: string | URL) => fetch(toService(url), { redirect: 'manual' });

  const authorizeUrl = (params: Record<string, string | undefined>): URL => {
    const url = new URL(config.serverMetadata().authorization_endpoint!);
    const all: Record<string, string | undefined> = { client_id: clientId, response_type: 'code', redirect_uri: REDIRECT, scope: 'user:read', state: 's1', ...params };
    for (const [name, value] of Object.entries(all)) if (value !== undefined) url.searchParams.set(name, value);
    return url;
  };

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    const ada = await registerUser(service, 'ada');
    const created = await call(service, 'POST', '/api/oauth/clients', { headers: { 'x-jwt-token': ada.token }, body: { name: 'Plant <b>dashboard</b>', redirectUris: [REDIRECT] } });
    expect(created.status).toBe(200);
    ({ clientId, clientSecret } = created.body as { clientId: string; clientSecret: string });
    config = await client.discovery(new URL(ISSUER), clientId, undefined, client.ClientSecretBasic(clientSecret), {
      execute: [client.allowInsecureRequests],
      [client.customFetch]: serviceFetch,
    });
    config[client.customFetch] = serviceFetch;
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('is discovered at PUBLIC_URL with S256 PKCE, revocation and the spec scopes, whatever Host was sent', async () => {
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(ISSUER);
    expect(metadata.authorization_endpoint).toBe(`${ISSUER}/oauth/auth`);
    expect(metadata.token_endpoint).toBe(`${ISSUER}/oauth/token`);
    expect(metadata.revocation_endpoint).toBe(`${ISSUER}/oauth/revoke`);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    // Only what a registered client can use is advertised: the code flow, the secret in Basic, no logout page.
    expect(metadata.response_types_supported).toEqual(['code']);
    expect(metadata.grant_types_supported).toEqual(['authorization_code', 'refresh_token']);
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(['client_secret_basic']);
    expect(metadata.end_session_endpoint).toBeUndefined();
    expect((await get(`${ISSUER}/oauth/session/end`)).status).toBe(404);
    expect(metadata.scopes_supported).toEqual(expect.arrayContaining(['user:read', 'projects:read', 'organizations:read', 'users:emails:read', 'offline_access']));
    // fetch sent the service's own address as Host: the answer still names PUBLIC_URL.
    const direct = (await (await fetch(`${service.apiUrl}/.well-known/openid-configuration`, { headers: { 'x-forwarded-host': 'evil.test' } })).json()) as { token_endpoint: string };
    expect(direct.token_endpoint).toBe(`${ISSUER}/oauth/token`);
    const jwks = (await (await get(metadata.jwks_uri!)).json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', use: 'sig' });
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });

  it('sends a well-formed request to the login page', async () => {
    const challenge = await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier());
    const answer = await get(client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'user:read', code_challenge: challenge, code_challenge_method: 'S256', state: 's1' }));
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toMatch(/^\/oauth\/interaction\/[A-Za-z0-9_-]+$/);
  });

  it('refuses with the standard error and no code: no PKCE, plain PKCE, an unknown scope', async () => {
    const challenge = await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier());
    const refusals: [Record<string, string | undefined>, string][] = [
      [{}, 'invalid_request'],
      [{ code_challenge: challenge, code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: challenge, code_challenge_method: 'S256', scope: 'user:read admin:all' }, 'invalid_scope'],
    ];
    for (const [params, error] of refusals) {
      const answer = await get(authorizeUrl(params));
      expect(answer.status, JSON.stringify(params)).toBe(303);
      const location = new URL(answer.headers.get('location')!);
      expect(location.origin + location.pathname).toBe(REDIRECT);
      expect(location.searchParams.get('error'), JSON.stringify(params)).toBe(error);
      expect(location.searchParams.get('state')).toBe('s1');
      expect(location.searchParams.has('code')).toBe(false);
    }
  });

  it('never redirects to an unregistered redirect URI or for an unknown client: an HTML error page', async () => {
    const challenge = await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier());
    for (const params of [{ redirect_uri: 'https://evil.test/cb' }, { client_id: 'no-such-client' }, { client_id: '<script>' }]) {
      const answer = await get(authorizeUrl({ code_challenge: challenge, code_challenge_method: 'S256', ...params }));
      expect(answer.status, JSON.stringify(params)).toBe(400);
      expect(answer.headers.get('location')).toBeNull();
      expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
      expect(answer.headers.get('content-security-policy')).toContain("default-src 'none'");
      const page = await answer.text();
      expect(page).toMatch(/invalid_(redirect_uri|client)/);
      expect(page).not.toContain('<script>');
    }
  });

  it('answers the token and revocation endpoints bad input with the standard errors, never 500', async () => {
    const basic = (secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
    const post = (path: string, body: string, headers: Record<string, string>) =>
      fetch(`${service.apiUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
    const cases: [string, string, Record<string, string>, number, string][] = [
      ['/oauth/token', 'grant_type=authorization_code&code=nope&redirect_uri=' + encodeURIComponent(REDIRECT) + '&code_verifier=' + 'a'.repeat(43), { authorization: basic(clientSecret) }, 400, 'invalid_grant'],
      ['/oauth/token', 'grant_type=authorization_code&code=nope', { authorization: basic('wrong') }, 401, 'invalid_client'],
      ['/oauth/token', 'grant_type=authorization_code&code=nope', {}, 400, 'invalid_request'],
      ['/oauth/token', 'grant_type=password&username=a&password=b', { authorization: basic(clientSecret) }, 400, 'unsupported_grant_type'],
      ['/oauth/token', '{bad json', { 'content-type': 'application/json', authorization: basic(clientSecret) }, 400, 'invalid_request'],
      ['/oauth/token', 'grant_type=refresh_token&refresh_token=nope', { authorization: basic(clientSecret) }, 400, 'invalid_grant'],
      ['/oauth/revoke', 'token=nope', { authorization: basic('wrong') }, 401, 'invalid_client'],
      ['/oauth/revoke', '', { authorization: basic(clientSecret) }, 400, 'invalid_request'],
    ];
    for (const [path, body, headers, status, error] of cases) {
      const answer = await post(path, body, headers);
      expect(answer.status, `${path} ${body}`).toBe(status);
      expect(((await answer.json()) as { error: string }).error, `${path} ${body}`).toBe(error);
    }
    // RFC 7009: an unknown token is revoked without complaint.
    expect((await post('/oauth/revoke', 'token=nope', { authorization: basic(clientSecret) })).status).toBe(200);
  });

  it('keeps the JSON API as it was next to it', async () => {
    expect((await call(service, 'GET', '/api/user')).status).toBe(401);
    expect((await fetch(`${service.apiUrl}/oauth/elsewhere`)).status).toBe(404);
  });
});

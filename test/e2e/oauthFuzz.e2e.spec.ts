import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTHORIZATION_BUDGET } from '../../api/oauth/authorizationServer';
import { call, registerUser, startTestService, type TestService } from '../support/testService';

const REDIRECT = 'http://localhost:3000/cb';

/**
 * Hostile input on every endpoint of the authorization server and its pages: never a 5xx, and every
 * refusal is either the standard OAuth error (JSON with `error`) or an HTML page, never a stack.
 * Its own service: the authorization requests it sends spend its address's budget.
 */
describe('OAuth endpoints under hostile input', () => {
  let service: TestService;
  let clientId: string;
  let basic: string;

  const hostile = fc.oneof(
    fc.constantFrom('', 'x', '%00', '\u0000', '[]', '{}', 'null', '../../etc/passwd', 'S256', 'plain', 'code', 'user:read offline_access', REDIRECT, 'a'.repeat(5000), '\u202e\ud800', '<script>'),
    fc.string({ maxLength: 40 }),
  );
  const answerIsClean = async (answer: Response, what: string) => {
    expect(answer.status, what).toBeLessThan(500);
    const text = await answer.text();
    expect(text, what).not.toMatch(/\n\s+at .+:\d+:\d+/);
    // A HEAD answer has headers only.
    if (answer.status >= 400 && text !== '' && (answer.headers.get('content-type') ?? '').includes('json')) expect(JSON.parse(text), what).toHaveProperty('error');
  };

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    const ada = await registerUser(service, 'ada');
    const created = await call(service, 'POST', '/api/oauth/clients', { headers: { 'x-jwt-token': ada.token }, body: { name: 'Dashboard', redirectUris: [REDIRECT] } });
    clientId = String(created.body.clientId);
    basic = `Basic ${Buffer.from(`${clientId}:${String(created.body.clientSecret)}`).toString('base64')}`;
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('the authorization endpoint', async () => {
    const names = ['client_id', 'response_type', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'prompt', 'resource', 'request', 'request_uri', 'claims', 'max_age', 'nonce', 'response_mode', 'login_hint', 'id_token_hint', 'acr_values', 'ui_locales'];
    const params = fc.dictionary(fc.constantFrom(...names), fc.oneof(hostile, fc.constant(clientId)), { maxKeys: 8 });
    await fc.assert(
      fc.asyncProperty(params, fc.constantFrom('GET', 'POST'), async (query, method) => {
        const body = new URLSearchParams(query).toString();
        const url = `${service.apiUrl}/oauth/auth${method === 'GET' ? `?${body}` : ''}`;
        const answer = await fetch(url, { method, redirect: 'manual', ...(method === 'POST' ? { body, headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {}) });
        await answerIsClean(answer, `${method} ${body.slice(0, 200)}`);
      }),
      // Within the address's budget of authorization requests.
      { numRuns: Math.min(150, AUTHORIZATION_BUDGET.perAddress - 10) },
    );
  });

  it('the token and revocation endpoints', async () => {
    const names = ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope', 'resource', 'client_id', 'client_secret', 'token', 'token_type_hint'];
    const grantTypes = fc.constantFrom('authorization_code', 'refresh_token', 'client_credentials', 'password', 'implicit', 'urn:ietf:params:oauth:grant-type:device_code');
    const params = fc.dictionary(fc.constantFrom(...names), fc.oneof(hostile, grantTypes), { maxKeys: 6 });
    const auth = fc.option(fc.oneof(fc.constant(basic), fc.constant('Basic '), fc.constant('Bearer x'), fc.string({ maxLength: 30 }).map((s) => `Basic ${Buffer.from(s).toString('base64')}`)), { nil: undefined });
    const types = fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain', 'multipart/form-data');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/oauth/token', '/oauth/revoke'), params, auth, types, async (path, form, authorization, type) => {
        const headers: Record<string, string> = { 'content-type': type };
        if (authorization !== undefined) headers.authorization = authorization;
        const body = type === 'application/json' ? JSON.stringify(form) : new URLSearchParams(form).toString();
        await answerIsClean(await fetch(`${service.apiUrl}${path}`, { method: 'POST', headers, body }), `${path} ${body.slice(0, 200)}`);
      }),
      { numRuns: 300 },
    );
  });

  it('every path of the server and the pages, with every method', async () => {
    const paths = ['/oauth/interaction/x', `/oauth/interaction/${'a'.repeat(200)}`, '/oauth/interaction/abc/login', '/oauth/interaction/abc/consent', '/oauth/auth/abc', '/oauth/jwks', '/.well-known/openid-configuration', '/oauth/me', '/oauth/token', '/oauth/revoke', '/oauth/session/end'];
    for (const path of paths) {
      for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH']) {
        const hasBody = !['GET', 'HEAD'].includes(method);
        const answer = await fetch(`${service.apiUrl}${path}`, { method, redirect: 'manual', ...(hasBody ? { body: 'a=b&csrf=x', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://evil.test' } } : {}) });
        await answerIsClean(answer, `${method} ${path}`);
      }
    }
  });
});

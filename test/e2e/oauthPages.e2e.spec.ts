import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, ISSUER, Page, REDIRECT } from '../support/oauthBrowser';
import { totpSteps } from '../support/totp';
import { call, registerUser, startTestService, type TestService } from '../support/testService';

const PASSWORD = 'correct horse battery';

describe('OAuth login and consent pages', () => {
  let service: TestService;
  let config: client.Configuration;
  let ada: { id: number; token: string };

  const serviceFetch: client.CustomFetch = (url, options) => fetch(String(url).replace(ISSUER, service.apiUrl), options as RequestInit);

  /** An authorization request as openid-client builds it, opened in a fresh browser: the login page. */
  async function start(scope: string): Promise<{ browser: Browser; verifier: string; state: string; login: Page }> {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, prompt: 'consent' });
    const browser = new Browser(service.apiUrl);
    const reached = await browser.follow(url.href);
    expect(reached.status).toBe(200);
    return { browser, verifier, state, login: reached.page! };
  }

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    ada = await registerUser(service, 'ada');
    const created = await call(service, 'POST', '/api/oauth/clients', { headers: { 'x-jwt-token': ada.token }, body: { name: 'Plant <b>dashboard</b>', redirectUris: [REDIRECT] } });
    const { clientId, clientSecret } = created.body as { clientId: string; clientSecret: string };
    config = await client.discovery(new URL(ISSUER), clientId, undefined, client.ClientSecretBasic(clientSecret), { execute: [client.allowInsecureRequests], [client.customFetch]: serviceFetch });
    config[client.customFetch] = serviceFetch;
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('logs in through the form, shows the consent page in words, and the code is exchanged with PKCE', async () => {
    const { browser, verifier, state, login } = await start('user:read projects:read offline_access');
    expect(login.title).toBe('Sign in');
    // Whom the person signs in for, escaped like every value on the pages.
    expect(login.html).toContain('Sign in to continue to <strong>Plant &#60;b&#62;dashboard&#60;/b&#62;</strong>');
    expect(login.form().fields).toEqual(expect.arrayContaining(['username', 'password', 'totpToken', 'csrf']));
    expect(login.headers.get('content-security-policy')).toContain("form-action 'self'");
    expect(login.headers.get('x-frame-options')).toBe('DENY');
    expect(login.headers.get('cache-control')).toBe('no-store');

    const consent = await browser.submit(login, { username: 'ada', password: PASSWORD });
    expect(consent.page?.title).toBe('Allow access?');
    const html = consent.page!.html;
    expect(html).toContain('Plant &#60;b&#62;dashboard&#60;/b&#62;');
    expect(html).not.toContain('<b>dashboard');
    for (const words of ['Read your profile', 'List your projects', 'Keep this access']) expect(html).toContain(words);
    expect(html).not.toContain('See e-mail addresses');

    const back = await browser.submit(consent.page!, {}, { name: 'decision', value: 'approve' });
    expect(back.callback?.searchParams.has('code')).toBe(true);
    const tokens = await client.authorizationCodeGrant(config, back.callback!, { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.access_token).toEqual(expect.any(String));
    expect(tokens.refresh_token).toEqual(expect.any(String));
    // The answer's scope is the access token's, for the API; offline_access shows as the refresh token.
    expect(tokens.scope?.split(' ').sort()).toEqual(['projects:read', 'user:read']);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);

    // Recorded: the login and the grant are events; no token is in the log.
    const log: string[] = [];
    for await (const event of service.stores.events.readAll()) log.push(event.type, event.streamId, JSON.stringify(event.data), JSON.stringify(event.metadata));
    const all = log.join('\n');
    expect(all).toContain('LoginSucceeded');
    expect(all).toMatch(/OAuthArtifactSaved\noauth-grant-\S+\n\{"kind":"Grant"/);
    expect(all).not.toContain(tokens.access_token);
    expect(all).not.toContain(tokens.refresh_token!);
  });

  it('denying answers access_denied to the application and no code', async () => {
    const { browser, state, login } = await start('user:read');
    const consent = await browser.submit(login, { username: 'ada@example.com', password: PASSWORD });
    const back = await browser.submit(consent.page!, {}, { name: 'decision', value: 'deny' });
    expect(back.callback?.searchParams.get('error')).toBe('access_denied');
    expect(back.callback?.searchParams.get('state')).toBe(state);
    expect(back.callback?.searchParams.has('code')).toBe(false);
  });

  it('a wrong password or an unknown user get the same page, and the throttle answers 429 past its budget', async () => {
    const { browser, login } = await start('user:read');
    const wrong = await browser.submit(login, { username: 'ada', password: 'not it' });
    const unknown = await browser.submit(login, { username: 'nobody', password: 'not it' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const message = (page: Page) => /<p role="alert">([^<]*)<\/p>/.exec(page.html)?.[1];
    expect(message(wrong.page!)).toBe('Invalid username, password or code.');
    expect(message(unknown.page!)).toBe(message(wrong.page!));

    let last = unknown;
    for (let i = 0; i < 30 && last.status !== 429; i++) last = await browser.submit(login, { username: 'mallory', password: `guess ${i}` });
    expect(last.status).toBe(429);
    expect(last.page!.html).toMatch(/Too many/);
  });

  it('refuses a form posted from another site or without its CSRF token, and changes nothing', async () => {
    const { browser, login } = await start('user:read');
    const crossSite = await browser.submit(login, { username: 'ada', password: PASSWORD }, undefined, 'https://evil.test');
    expect(crossSite.status).toBe(403);
    const noToken = await browser.follow(login.form().action, { method: 'POST', form: { username: 'ada', password: PASSWORD } });
    expect(noToken.status).toBe(403);
    // Still at the login prompt: neither signed the browser in.
    expect((await browser.follow(login.url.href)).page?.title).toBe('Sign in');
  });

  it('a page of another browser’s interaction, or none, is an error page, not a 500', async () => {
    const { login } = await start('user:read');
    const stranger = new Browser(service.apiUrl);
    for (const url of [login.url.href, '/oauth/interaction/no-such-uid', '/oauth/interaction/%00bad']) {
      const answer = await stranger.follow(url);
      expect(answer.status, url).toBeGreaterThanOrEqual(400);
      expect(answer.status, url).toBeLessThan(500);
    }
    const posted = await stranger.follow(`${login.url.pathname}/login`, { method: 'POST', form: { ...login.form().hidden, username: 'ada', password: PASSWORD } });
    expect(posted.status).toBeGreaterThanOrEqual(400);
    expect(posted.status).toBeLessThan(500);
  });

  it('answers bad form input with a 4xx page and signs nobody in', async () => {
    const { browser, login } = await start('user:read');
    const { action, hidden } = login.form();
    const huge = await browser.follow(action, { method: 'POST', form: { ...hidden, username: 'ada', password: 'x'.repeat(40_000) } });
    expect(huge.status).toBe(413);
    expect(huge.page?.title).toBe('Authorization error');
    const overlong = await browser.submit(login, { username: 'a'.repeat(5000), password: PASSWORD });
    expect(overlong.status).toBe(401);
    const consentFirst = await browser.follow(action.replace(/\/login$/, '/consent'), { method: 'POST', form: { ...hidden, decision: 'approve' } });
    expect(consentFirst.status).toBe(400);
    const consent = await browser.submit(login, { username: 'ada', password: PASSWORD });
    expect(consent.page?.title).toBe('Allow access?');
    for (const decision of ['', 'maybe']) expect((await browser.submit(consent.page!, { decision })).status, decision).toBe(400);
    const loginAgain = await browser.follow(action, { method: 'POST', form: { ...hidden, username: 'ada', password: PASSWORD } });
    expect(loginAgain.status).toBe(400);
    // Still asking: none of these decided anything.
    expect((await browser.follow(consent.page!.url.href)).page?.title).toBe('Allow access?');
  });

  it('asks users with MFA for their authenticator code', async () => {
    const bob = await registerUser(service, 'bob');
    const key = String((await call(service, 'POST', '/api/user/mfa/totp/create-key', { headers: { 'x-jwt-token': bob.token } })).body.key);
    const steps = await totpSteps(key, 10);
    expect((await call(service, 'POST', '/api/user/mfa/totp/set-key', { headers: { 'x-jwt-token': bob.token }, body: { key, totpToken: steps.previous } })).status).toBe(200);

    const { browser, login } = await start('user:read');
    const asked = await browser.submit(login, { username: 'bob', password: PASSWORD });
    expect(asked.status).toBe(401);
    expect(asked.page!.html).toContain('authenticator app');
    const consent = await browser.submit(asked.page!, { username: 'bob', password: PASSWORD, totpToken: steps.current });
    expect(consent.page?.title).toBe('Allow access?');
  });
});

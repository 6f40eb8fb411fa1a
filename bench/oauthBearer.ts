// `GET /v1/api/user` with an OAuth access token (issue 27) through the whole service, started in this
// process in a temp data folder, over 32 keep-alive connections from a load generator in a child
// process (bench/loadGenerator.ts). The token is resolved on every request (api/auth/principal.ts ->
// api/oauth/authorizationServer.ts: oidc-provider's AccessToken.find through our adapter, which reads
// the token's and its grant's streams from the log, the user's session version and the client), so
// this measures what that costs. The token comes from the real flow: a client registered with the
// user's JWT, then the authorization code flow with PKCE through the login and consent pages.
// Three contenders take turns round by round:
// - the service, called with the user's session JWT (x-jwt-token);
// - the service, called with the access token (scope user:read) as `Authorization: Bearer`;
// - a bare Koa handler in the same process, on another port, answering a copy of the service's Bearer
//   answer (kept as an object and stringified by Koa per request, as the service does): the ceiling.
// Every answer is checked (status 200 and a `{"success":true` envelope).

import http from 'node:http';
import Koa from 'koa';
import * as client from 'openid-client';
import { Browser, ISSUER, REDIRECT } from '../test/support/oauthBrowser';
import type { BenchResult } from './benchResult';
import { BENCH_PASSWORD, HOST, JSON_HEADERS, closeServer, expectOk, listen, turnFigures, readStoreEnv, request, signUp, startBenchService } from './benchKit';
import { roundsInTurn, startLoadGenerator } from './loadGenerator';

const CONNECTIONS = 32;
const ROUNDS = 8;
const ROUND_MS = 400;
const WARMUP_MS = 300;
const USERNAME = 'benchoauth';
const OK_PREFIX = '{"success":true';

export async function benchOauthBearer(): Promise<BenchResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let started: Awaited<ReturnType<typeof startBenchService>> | undefined;
  let bare: http.Server | undefined;
  let load: Awaited<ReturnType<typeof startLoadGenerator>> | undefined;
  try {
    // PUBLIC_URL is the issuer the flow's URLs name; the Browser and openid-client's fetch send them to the service.
    const env = readStoreEnv();
    started = await startBenchService('oauthbearer', { label: 'embedded default', env: { ...env, PUBLIC_URL: ISSUER } });
    const api = started.service.apiUrl;
    if (!api) throw new Error('the service started without its api role');

    await signUp(agent, api, USERNAME);
    const login = expectOk(await request(agent, new URL('/v1/api-login', api), 'POST', JSON_HEADERS, JSON.stringify({ username: USERNAME, password: BENCH_PASSWORD })), 'login');
    const jwt = String((JSON.parse(login) as { token: string }).token);
    const registered = expectOk(
      await request(agent, new URL('/v1/api/oauth/clients', api), 'POST', { ...JSON_HEADERS, 'x-jwt-token': jwt }, JSON.stringify({ name: 'Bench dashboard', redirectUris: [REDIRECT] })),
      'client registration',
    );
    const { clientId, clientSecret } = JSON.parse(registered) as { clientId: string; clientSecret: string };
    const accessToken = await authorize(api, clientId, clientSecret, 'user:read');

    const path = '/v1/api/user';
    const jwtHeaders = { 'x-jwt-token': jwt };
    const bearerHeaders = { authorization: `Bearer ${accessToken}` };
    const jwtAnswer = expectOk(await request(agent, new URL(path, api), 'GET', jwtHeaders), `GET ${path} (JWT)`);
    const bearerAnswer = expectOk(await request(agent, new URL(path, api), 'GET', bearerHeaders), `GET ${path} (Bearer)`);
    for (const answer of [jwtAnswer, bearerAnswer]) if (!answer.startsWith(OK_PREFIX)) throw new Error(`GET ${path} answered without success: ${answer.slice(0, 300)}`);

    const copy: unknown = JSON.parse(bearerAnswer);
    const app = new Koa();
    app.use(async (ctx) => {
      ctx.body = copy;
    });
    bare = http.createServer(app.callback());
    const bareUrl = `http://${HOST}:${await listen(bare)}`;

    const contenders = [
      { name: 'JWT', url: `${api}${path}`, headers: jwtHeaders },
      { name: 'Bearer', url: `${api}${path}`, headers: bearerHeaders },
      { name: 'bare Koa', url: `${bareUrl}${path}`, headers: bearerHeaders },
    ];
    load = await startLoadGenerator(contenders.map((c) => ({ kind: 'get' as const, ...c })), CONNECTIONS);
    for (const c of contenders) await load.round(c.name, WARMUP_MS);
    const results = await roundsInTurn(load, contenders.map((c) => c.name), ROUNDS, ROUND_MS);
    const { rate, perRound, lat, cpuPerCall, spreadOf } = turnFigures(results);
    return {
      name: 'oauthBearer: GET /v1/api/user with an OAuth access token (Bearer) vs the session JWT, load generator in its own process',
      lines: [
        'service in this process; load generator in a child process; bare Koa in the service\'s process, on its own port',
        `token from the authorization code flow with PKCE through the login and consent pages (scope user:read); answer ${Buffer.byteLength(bearerAnswer)} bytes with the Bearer token, ${Buffer.byteLength(jwtAnswer)} with the JWT`,
        `GET ${path}, ${CONNECTIONS} keep-alive connections, one request in flight on each:`,
        `  JWT      ${lat('JWT')}`,
        `  Bearer   ${lat('Bearer')}`,
        `  bare Koa ${lat('bare Koa')}`,
        `  Bearer/bare-Koa ${(rate('Bearer') / rate('bare Koa')).toFixed(3)} overall; ${spreadOf(perRound('Bearer', 'bare Koa'))}`,
        `  Bearer/JWT      ${(rate('Bearer') / rate('JWT')).toFixed(3)} overall; ${spreadOf(perRound('Bearer', 'JWT'))}`,
        `  JWT/bare-Koa    ${(rate('JWT') / rate('bare Koa')).toFixed(3)} overall; ${spreadOf(perRound('JWT', 'bare Koa'))}`,
        `  CPU of the serving process per call: JWT ${cpuPerCall('JWT').toFixed(0)} us, Bearer ${cpuPerCall('Bearer').toFixed(0)} us, bare Koa ${cpuPerCall('bare Koa').toFixed(0)} us ` +
          `(JWT/Bearer ${(cpuPerCall('JWT') / cpuPerCall('Bearer')).toFixed(3)}, bare/Bearer ${(cpuPerCall('bare Koa') / cpuPerCall('Bearer')).toFixed(3)}: the ratios with the machine's other load taken out)`,
        `  ${ROUNDS} rounds of ${ROUND_MS} ms per contender, taking turns (first one rotating), after ${WARMUP_MS} ms of warm-up each; every answer checked (200, success true)`,
      ],
    };
  } finally {
    await load?.stop();
    agent.destroy();
    await closeServer(bare);
    await started?.stop();
  }
}

/** The user authorizes the client through the pages, as a browser would; the access token it gets. */
export async function authorize(api: string, clientId: string, clientSecret: string, scope: string): Promise<string> {
  const serviceFetch: client.CustomFetch = (url, options) => fetch(String(url).replace(ISSUER, api), options as RequestInit);
  const config = await client.discovery(new URL(ISSUER), clientId, undefined, client.ClientSecretBasic(clientSecret), { execute: [client.allowInsecureRequests], [client.customFetch]: serviceFetch });
  config[client.customFetch] = serviceFetch;
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, prompt: 'consent' });
  const browser = new Browser(api);
  const login = (await browser.follow(url.href)).page;
  if (!login) throw new Error('the authorization request reached no login page');
  const consent = (await browser.submit(login, { username: USERNAME, password: BENCH_PASSWORD })).page;
  if (!consent) throw new Error('the login reached no consent page');
  const back = await browser.submit(consent, {}, { name: 'decision', value: 'approve' });
  if (!back.callback) throw new Error(`the consent did not return to the application (${back.status})`);
  const tokens = await client.authorizationCodeGrant(config, back.callback, { pkceCodeVerifier: verifier, expectedState: state });
  return tokens.access_token;
}

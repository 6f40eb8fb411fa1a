// Logins and `GET /v1/api/user` through the whole service, started in-process on the embedded
// default (SQLite event store, in-memory read models, every role), with a few concurrent clients
// over keep-alive HTTP on 127.0.0.1. Two ceilings are measured in the same run:
// - a bare Koa handler in the same process, on another port, taking the same request and
//   answering the same JSON (a copy of the service's own answer);
// - for logins, the password hash alone: `verifyPassword` with the service's scrypt parameters,
//   as many calls at once as there are clients.
// Each login also reads the user's stream and appends a `LoginSucceeded` event (SQLite, WAL,
// synchronous=FULL, so one fsync per login): that is part of what is measured.
// Contenders take turns round by round, so drift in the machine's speed hits all alike.

import http from 'node:http';
import Koa from 'koa';
import { hashPassword, verifyPassword } from '../commands/passwords';
import { loadUser } from '../commands/users/userCommands';
import type { BenchResult } from './benchResult';
import { HOST, JSON_HEADERS, add, describe, empty, expectOk, listen, measure, ms, pct, perSecond, ratio, request, spread, type Op, closeServer, startBenchService, BENCH_PASSWORD, signUp } from './benchKit';

/** Concurrent clients; each logs in as its own user, so no two logins race on one stream. */
const CLIENTS = 4;
const PASSWORD = BENCH_PASSWORD;

const LOGIN_ROUNDS = 8;
/** Logins and hashes take tens of ms each: rounds long enough to hold a few dozen. */
const SLOW_ROUND_MS = 700;
const FAST_ROUND_MS = 200;
const USER_ROUNDS = 10;
const WARMUP_MS = 300;




export async function benchAccounts(): Promise<BenchResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  let started: Awaited<ReturnType<typeof startBenchService>> | undefined;
  let bare: http.Server | undefined;
  try {
    started = await startBenchService('accounts');
    const { service, dataDir } = started;
    const api = service.apiUrl;
    if (!api) throw new Error('the service started without its api role');
    const send = (base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      request(agent, new URL(path, base), method, headers, body);

    // One user per client, and a token each.
    const usernames = Array.from({ length: CLIENTS }, (_, i) => `bench${i}`);
    const userIds: number[] = [];
    for (const username of usernames) {
      userIds.push(await signUp(agent, api, username));
    }
    const loginBodies = usernames.map((username) => JSON.stringify({ username, password: PASSWORD }));
    const loginAnswers = await Promise.all(loginBodies.map(async (body) => expectOk(await send(api, 'POST', '/v1/api-login', JSON_HEADERS, body), 'login')));
    const tokens = loginAnswers.map((text) => String((JSON.parse(text) as { token: string }).token));
    const userAnswer = expectOk(await send(api, 'GET', '/v1/api/user', { 'x-jwt-token': tokens[0]! }), 'GET /v1/api/user');

    // The ceiling: one Koa middleware reading the body and answering a copy of the service's answer.
    const loginJson: unknown = JSON.parse(loginAnswers[0]!);
    const userJson: unknown = JSON.parse(userAnswer);
    const app = new Koa();
    app.use(async (ctx) => {
      if (ctx.method === 'POST') {
        const chunks: Buffer[] = [];
        for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
        JSON.parse(Buffer.concat(chunks).toString('utf8'));
        ctx.body = loginJson;
      } else {
        ctx.body = userJson;
      }
    });
    bare = http.createServer(app.callback());
    const bareUrl = `http://${HOST}:${await listen(bare)}`;

    const storedHash = await hashPassword(PASSWORD);
    const login: Op = async (i) => {
      expectOk(await send(api, 'POST', '/v1/api-login', JSON_HEADERS, loginBodies[i]), 'login');
    };
    const bareLogin: Op = async (i) => {
      expectOk(await send(bareUrl, 'POST', '/login', JSON_HEADERS, loginBodies[i]), 'bare login');
    };
    const hash: Op = async () => {
      if (!(await verifyPassword(PASSWORD, storedHash))) throw new Error('verifyPassword refused the right password');
    };
    const getUser: Op = async (i) => {
      expectOk(await send(api, 'GET', '/v1/api/user', { 'x-jwt-token': tokens[i]! }), 'GET /v1/api/user');
    };
    const bareUser: Op = async () => {
      expectOk(await send(bareUrl, 'GET', '/user'), 'bare GET');
    };

    const lines = [
      `service in-process on ${HOST} (SQLite event store, memory read models, all roles), temp dir ${dataDir}`,
      `${CLIENTS} concurrent clients over keep-alive HTTP (node:http Agent), client in the same process; bare Koa = one middleware on another port answering the same JSON`,
    ];

    // A hash on its own, one at a time, for its latency without contention.
    const single = await measure(hash, 1_000, 1);

    // 1. Logins, next to the bare handler and the hash alone.
    await measure(login, WARMUP_MS, CLIENTS);
    await measure(bareLogin, WARMUP_MS, CLIENTS);
    await measure(hash, WARMUP_MS, CLIENTS);
    const loginRate = empty();
    const bareLoginRate = empty();
    const hashRate = empty();
    const loginVsBare: number[] = [];
    const loginVsHash: number[] = [];
    for (let round = 0; round < LOGIN_ROUNDS; round++) {
      const l = await measure(login, SLOW_ROUND_MS, CLIENTS);
      const b = await measure(bareLogin, FAST_ROUND_MS, CLIENTS);
      const h = await measure(hash, SLOW_ROUND_MS, CLIENTS);
      add(loginRate, l);
      add(bareLoginRate, b);
      add(hashRate, h);
      loginVsBare.push(perSecond(l) / perSecond(b));
      loginVsHash.push(perSecond(l) / perSecond(h));
    }
    const msPerLogin = 1000 / perSecond(loginRate);
    const msPerHash = 1000 / perSecond(hashRate);
    const msPerBare = 1000 / perSecond(bareLoginRate);
    lines.push(`POST /v1/api-login, right password (scrypt N=16384 r=8 p=1 + read of the user's stream + fsync'd LoginSucceeded append to the login audit stream + JWT):`);
    lines.push(`  login ${describe(loginRate)}, bare Koa ${describe(bareLoginRate)}, verifyPassword alone ${describe(hashRate)} (${CLIENTS} at once)`);
    lines.push(`  login/bare-Koa ${ratio(loginRate, bareLoginRate)} overall; ${spread(loginVsBare)}`);
    lines.push(`  login/scrypt   ${ratio(loginRate, hashRate)} overall; ${spread(loginVsHash)}`);
    lines.push(
      `  per login, in throughput: ${msPerLogin.toFixed(1)} ms, of which the hash ${msPerHash.toFixed(1)} ms (${pct(msPerHash / msPerLogin)}), ` +
        `the bare HTTP round trip ${msPerBare.toFixed(2)} ms, the rest ${(msPerLogin - msPerHash - msPerBare).toFixed(1)} ms`,
    );
    lines.push(
      `  latency: one hash alone ${ms(single.latencySeconds / single.ops)}; at ${CLIENTS} at once a hash ${ms(hashRate.latencySeconds / hashRate.ops)}, a login ${ms(loginRate.latencySeconds / loginRate.ops)}`,
    );

    // Password logins are audit events beside the user's stream: the stream a login reads stays the same size.
    const events = service.stores.events;
    const streamLength = (await events.readStream(`user-${userIds[0]}`)).length;
    const reads = 20;
    const readStart = process.hrtime.bigint();
    for (let i = 0; i < reads; i++) await loadUser(events, userIds[0]!);
    const msPerRead = Number(process.hrtime.bigint() - readStart) / 1e6 / reads;
    const audited = (await events.readStream(`logins-${userIds[0]}`)).length;
    lines.push(`  each login reads and folds its user's stream once: ${streamLength} events after ${audited} logins of that user; one read takes ${msPerRead.toFixed(2)} ms`);

    // 2. GET /v1/api/user with a JWT, next to the bare handler.
    await measure(getUser, WARMUP_MS, CLIENTS);
    await measure(bareUser, WARMUP_MS, CLIENTS);
    const userRate = empty();
    const bareUserRate = empty();
    const userVsBare: number[] = [];
    for (let round = 0; round < USER_ROUNDS; round++) {
      const u = await measure(getUser, FAST_ROUND_MS, CLIENTS);
      const b = await measure(bareUser, FAST_ROUND_MS, CLIENTS);
      add(userRate, u);
      add(bareUserRate, b);
      userVsBare.push(perSecond(u) / perSecond(b));
    }
    lines.push(`GET /v1/api/user with x-jwt-token (${Buffer.byteLength(userAnswer)}-byte answer):`);
    lines.push(`  service ${describe(userRate)}, bare Koa ${describe(bareUserRate)}`);
    lines.push(`  service/bare-Koa ${ratio(userRate, bareUserRate)} overall; ${spread(userVsBare)}`);
    lines.push(
      `  ${LOGIN_ROUNDS} login rounds (${SLOW_ROUND_MS} ms login, ${FAST_ROUND_MS} ms bare, ${SLOW_ROUND_MS} ms hash), ${USER_ROUNDS} user rounds (${FAST_ROUND_MS} ms each), alternating`,
    );
    return { name: 'accounts: logins and GET /v1/api/user over HTTP (embedded default)', lines };
  } finally {
    agent.destroy();
    await closeServer(bare);
    await started?.stop();
  }
}














// `GET /v1/api/{projectId}` (project information) through the whole service, started in-process on
// the embedded default (SQLite event store, in-memory read models, every role) in a temp data
// folder, talking only to 127.0.0.1, over 32 keep-alive connections. The project is made realistic
// first: a few hundred small samples through the ingestion API under several labels, two
// collaborators besides the owner, and one impulse. Three contenders take turns round by round:
// - the service, called with the owner's JWT (x-jwt-token);
// - the service, called with the project's API key (x-api-key);
// - a bare Koa handler in the same process, on another port, answering a copy of the service's own
//   answer (kept as an object and stringified by Koa per request, as the service does).
// Every answer is checked (status 200 and a `{"success":true` envelope), so a failing service
// cannot look fast. Client, service and bare Koa share this one Node process and event loop.

import http from 'node:http';
import Koa from 'koa';
import type { BenchResult } from './benchResult';
import { HOST, JSON_HEADERS, add, closeServer, describe, empty, expectOk, listen, measure, perSecond, quantiles, ratio, request, spread, startBenchService, type Op, type Rate, ownerWithProject, signUp, BENCH_PASSWORD } from './benchKit';

/** Keep-alive connections, one request in flight on each. */
const CONNECTIONS = 32;
const SAMPLES = 200;
const LABELS = ['idle', 'wave', 'updown', 'circle', 'snake'];
const COLLABORATORS = 2;
const ROUNDS = 8;
const ROUND_MS = 400;
const WARMUP_MS = 300;
/** What every successful answer of the service starts with (its envelope puts `success` first). */
const OK_PREFIX = '{"success":true';

export async function benchProjectInfo(): Promise<BenchResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let started: Awaited<ReturnType<typeof startBenchService>> | undefined;
  let bare: http.Server | undefined;
  try {
    started = await startBenchService('projectinfo');
    const { service, dataDir } = started;
    const api = service.apiUrl;
    const ingestion = service.ingestionUrl;
    if (!api || !ingestion) throw new Error('the service started without its api and ingestion roles');
    const send = (base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      request(agent, new URL(path, base), method, headers, body);
    // The owner, a token, a project and its API key.
    const { token, projectId, apiKey } = await ownerWithProject(agent, api, 'benchowner', 'Bench project info');
    const auth = { ...JSON_HEADERS, 'x-jwt-token': token };

    // Two collaborators.
    for (let i = 0; i < COLLABORATORS; i++) {
      const username = `benchcollab${i}`;
      await signUp(agent, api, username);
      const invited = expectOk(await send(api, 'POST', `/v1/api/${projectId}/collaborators/add`, auth, JSON.stringify({ usernameOrEmail: username })), 'collaborator invite');
      // A collaborator joins by accepting the invitation with their own JWT.
      const login = expectOk(await send(api, 'POST', '/v1/api-login', JSON_HEADERS, JSON.stringify({ username, password: BENCH_PASSWORD })), 'collaborator login');
      const invitee = { ...JSON_HEADERS, 'x-jwt-token': String((JSON.parse(login) as { token: string }).token) };
      const invitationId = Number((JSON.parse(invited) as { id: number }).id);
      expectOk(await send(api, 'POST', `/v1/api/user/invitations/${invitationId}/accept`, invitee), 'invitation accept');
    }

    // Samples under several labels, most for training and a fifth for testing, 32 at a time.
    let next = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        for (let n = next++; n < SAMPLES; n = next++) {
          const category = n % 5 === 4 ? 'testing' : 'training';
          const fileName = `${LABELS[n % LABELS.length]}.${n}.json`;
          const reply = await send(ingestion, 'POST', `/api/${category}/data`, { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': fileName }, smallSample(n));
          if (reply.status !== 200 || reply.text !== fileName) throw new Error(`POST /api/${category}/data answered ${reply.status}: ${reply.text.slice(0, 300)}`);
        }
      }),
    );

    // One impulse: time series, spectral analysis, a classifier.
    expectOk(await send(api, 'POST', `/v1/api/${projectId}/impulse`, auth, JSON.stringify(IMPULSE)), 'impulse create');

    // One real answer each way, for the bare handler and for the record.
    const jwtHeaders = { 'x-jwt-token': token };
    const keyHeaders = { 'x-api-key': apiKey };
    const path = `/v1/api/${projectId}`;
    const jwtAnswer = expectOk(await send(api, 'GET', path, jwtHeaders), `GET ${path} (JWT)`);
    const keyAnswer = expectOk(await send(api, 'GET', path, keyHeaders), `GET ${path} (API key)`);
    for (const answer of [jwtAnswer, keyAnswer]) if (!answer.startsWith(OK_PREFIX)) throw new Error(`GET ${path} answered without success: ${answer.slice(0, 300)}`);
    const info = JSON.parse(jwtAnswer) as {
      project?: { collaborators?: unknown[] };
      dataSummary?: { dataCount?: number; labels?: unknown[] };
      dataSummaryPerCategory?: Record<string, { dataCount?: number }>;
      impulse?: { created?: boolean };
    };

    // The ceiling: one Koa middleware answering the service's own JWT answer, stringified per request.
    const copy: unknown = JSON.parse(jwtAnswer);
    const app = new Koa();
    app.use(async (ctx) => {
      ctx.body = copy;
    });
    bare = http.createServer(app.callback());
    const bareUrl = `http://${HOST}:${await listen(bare)}`;

    // Each call timed on its own, into `sink` (ms), and checked.
    const getOp = (base: string, headers: Record<string, string>, what: string, sink: number[]): Op => async () => {
      const t = process.hrtime.bigint();
      const reply = await send(base, 'GET', path, headers);
      sink.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (reply.status !== 200 || !reply.text.startsWith(OK_PREFIX)) throw new Error(`${what} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
    };
    const contenders = [
      { name: 'JWT', base: api, headers: jwtHeaders, what: `GET ${path} (JWT)` },
      { name: 'API key', base: api, headers: keyHeaders, what: `GET ${path} (API key)` },
      { name: 'bare Koa', base: bareUrl, headers: jwtHeaders, what: 'bare Koa' },
    ].map((c) => {
      const latencies: number[] = [];
      return { ...c, latencies, rate: empty(), rounds: [] as Rate[], op: getOp(c.base, c.headers, c.what, latencies), warm: getOp(c.base, c.headers, c.what, []) };
    });
    const [jwt, key, koa] = contenders as [(typeof contenders)[0], (typeof contenders)[0], (typeof contenders)[0]];

    for (const c of contenders) await measure(c.warm, WARMUP_MS, CONNECTIONS);
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate who goes first, so none always follows the same neighbour.
      for (let i = 0; i < contenders.length; i++) {
        const c = contenders[(round + i) % contenders.length]!;
        const r = await measure(c.op, ROUND_MS, CONNECTIONS);
        add(c.rate, r);
        c.rounds.push(r);
      }
    }
    const perRound = (c: typeof jwt) => c.rounds.map((r, i) => perSecond(r) / perSecond(koa.rounds[i]!));
    const lat = (c: typeof jwt) => {
      const [p50, p99, max] = quantiles(c.latencies, [0.5, 0.99, 1]);
      return `p50 ${p50!.toFixed(2)} ms, p99 ${p99!.toFixed(2)} ms, max ${max!.toFixed(1)} ms (${c.latencies.length.toLocaleString('en-US')} calls)`;
    };

    const count = (category: string) => info.dataSummaryPerCategory?.[category]?.dataCount ?? '?';
    const lines = [
      `service in-process on ${HOST} (embedded default: SQLite event store, SQLite and file blob store, memory read models, all roles), temp dir ${dataDir}`,
      'client, service and bare Koa share this one Node process (one event loop): every figure includes the client\'s own work',
      `project: ${info.dataSummary?.dataCount ?? '?'} samples (${count('training')} training, ${count('testing')} testing), ` +
        `${info.dataSummary?.labels?.length ?? '?'} labels, ${info.project?.collaborators?.length ?? '?'} collaborators (owner included), impulse created: ${info.impulse?.created ?? '?'}; ` +
        `answer ${Buffer.byteLength(jwtAnswer)} bytes with a JWT (development keys included), ${Buffer.byteLength(keyAnswer)} with the API key; bare Koa answers the JWT one`,
      `GET ${path}, ${CONNECTIONS} keep-alive connections, one request in flight on each:`,
      `  JWT      ${describe(jwt.rate)}, ${lat(jwt)}`,
      `  API key  ${describe(key.rate)}, ${lat(key)}`,
      `  bare Koa ${describe(koa.rate)}, ${lat(koa)}`,
      `  JWT/bare-Koa     ${ratio(jwt.rate, koa.rate)} overall; ${spread(perRound(jwt))}`,
      `  API key/bare-Koa ${ratio(key.rate, koa.rate)} overall; ${spread(perRound(key))}`,
      `  ${ROUNDS} rounds of ${ROUND_MS} ms per contender, taking turns (first one rotating), after ${WARMUP_MS} ms of warm-up each; every answer checked (200, success true)`,
    ];
    return { name: 'projectInfo: GET /v1/api/{projectId} with a JWT and an API key over HTTP (embedded default)', lines };
  } finally {
    agent.destroy();
    await closeServer(bare);
    await started?.stop();
  }
}

const IMPULSE = {
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY', 'accZ'], windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 100 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY', 'accZ'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
};

/** An unsigned JSON sample (alg none) of 10 rows x 3 sensors; `n` makes it unique. */
function smallSample(n: number): string {
  const values = Array.from({ length: 10 }, (_, row) => [n + row / 10, Math.round(Math.sin(n + row) * 1000) / 100, -row * 0.25]);
  return JSON.stringify({
    protected: { ver: 'v1', alg: 'none', iat: Math.floor(Date.now() / 1000) },
    signature: '0'.repeat(64),
    payload: {
      device_name: 'bench-device',
      device_type: 'BENCH',
      interval_ms: 10,
      sensors: ['accX', 'accY', 'accZ'].map((name) => ({ name, units: 'm/s2' })),
      values,
    },
  });
}

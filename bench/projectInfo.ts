// `GET /v1/api/{projectId}` (project information) through the whole service, started in this process
// in a temp data folder (on the embedded default and, when MONGO_URL is set, on the MongoDB read
// store), talking only to 127.0.0.1, over 32 keep-alive connections from a load generator in a child
// process (bench/loadGenerator.ts), as real clients are. The project is made realistic
// first: a few hundred small samples through the ingestion API under several labels, two
// collaborators besides the owner, and one impulse. Five contenders take turns round by round:
// - the service, called with the owner's JWT (x-jwt-token);
// - the service, called with the project's API key (x-api-key);
// - the service, called with the JWT and a query parameter no call repeats: the answers the service
//   keeps while the read models stand still (api/http/readModelMemo.ts) never serve these, so this is
//   the figure for a project read right after a change (the principal is still kept);
// - a bare Koa handler in the same process, on another port, answering a copy of the service's own
//   answer (kept as an object and stringified by Koa per request, as the service does for an answer
//   it cannot keep);
// - the same bare handler answering that answer's UTF-8 bytes, made once: the least a server can do
//   for it, and what the service does with an answer it keeps (the stricter ceiling).
// Every answer is checked (status 200 and a `{"success":true` envelope), so a failing service
// cannot look fast. The aims (issue 28): 0.75 of bare Koa, and a p99 under 10 ms at 32 connections.

import http from 'node:http';
import Koa from 'koa';
import type { RunningService } from '../main';
import type { BenchResult } from './benchResult';
import { BENCH_PASSWORD, HOST, JSON_HEADERS, benchStores, closeServer, expectOk, listen, ownerWithProject, turnFigures, request, signUp, startBenchService, type BenchStore } from './benchKit';
import { roundsInTurn, startLoadGenerator } from './loadGenerator';

/** Keep-alive connections, one request in flight on each. */
const CONNECTIONS = 32;
const SAMPLES = 200;
const LABELS = ['idle', 'wave', 'updown', 'circle', 'snake'];
const COLLABORATORS = 2;
const ROUNDS = 8;
const ROUND_MS = 400;
const WARMUP_MS = 300;
const AIM_P99_MS = 10;
const AIM_RATIO = 0.75;
/** What every successful answer of the service starts with (its envelope puts `success` first). */
const OK_PREFIX = '{"success":true';

export async function benchProjectInfo(): Promise<BenchResult> {
  const lines = ['service in this process; load generator in a child process; bare Koa in the service\'s process, on its own port'];
  for (const store of benchStores()) lines.push(...(await projectInfoOn(store)));
  return { name: 'projectInfo: GET /v1/api/{projectId} with a JWT and an API key over HTTP, load generator in its own process', lines };
}

async function projectInfoOn(store: BenchStore): Promise<string[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let started: Awaited<ReturnType<typeof startBenchService>> | undefined;
  let bare: http.Server | undefined;
  let load: Awaited<ReturnType<typeof startLoadGenerator>> | undefined;
  try {
    started = await startBenchService('projectinfo', store);
    const api = started.service.apiUrl!;
    const { path, jwtHeaders, keyHeaders, jwtAnswer, keyAnswer, info } = await realisticProject(agent, started.service);
    const ceiling = await projectInfoContenders(api, { path, jwtHeaders, keyHeaders, jwtAnswer });
    bare = ceiling.bare;
    const { contenders } = ceiling;
    load = await startLoadGenerator(contenders.map((c) => ({ kind: 'get' as const, ...c })), CONNECTIONS);
    for (const c of contenders) await load.round(c.name, WARMUP_MS);
    const results = await roundsInTurn(load, contenders.map((c) => c.name), ROUNDS, ROUND_MS);
    const figures = turnFigures(results);
    const { rate, lat, cpuPerCall, p99, spreadOf } = figures;
    const perRound = (name: string, bare = 'bare Koa') => figures.perRound(name, bare);
    const aim = (name: string, bare: string) => `${(rate(name) / rate(bare)).toFixed(3)} overall (aim: ${AIM_RATIO} or more); ${spreadOf(perRound(name, bare))}`;
    const p99Aim = (name: string) => `p99 ${p99(name) < AIM_P99_MS ? 'within' : 'over'} the ${AIM_P99_MS} ms aim`;

    const count = (category: string) => info.dataSummaryPerCategory?.[category]?.dataCount ?? '?';
    return [
      `on the ${store.label}: project of ${info.dataSummary?.dataCount ?? '?'} samples (${count('training')} training, ${count('testing')} testing), ` +
        `${info.dataSummary?.labels?.length ?? '?'} labels, ${info.project?.collaborators?.length ?? '?'} collaborators (owner included), impulse created: ${info.impulse?.created ?? '?'}; ` +
        `answer ${Buffer.byteLength(jwtAnswer)} bytes with a JWT (development keys included), ${Buffer.byteLength(keyAnswer)} with the API key; bare Koa answers the JWT one`,
      `  GET ${path}, ${CONNECTIONS} keep-alive connections, one request in flight on each:`,
      `  JWT      ${lat('JWT')}`,
      `  API key  ${lat('API key')}`,
      `  JWT, none kept (a query no call repeats) ${lat('JWT, none kept')}`,
      `  bare Koa ${lat('bare Koa')}`,
      `  bare Koa, bytes made once ${lat('bare Koa, bytes')}`,
      `  JWT/bare-Koa     ${aim('JWT', 'bare Koa')}; ${p99Aim('JWT')}`,
      `  JWT/bare-Koa-bytes ${aim('JWT', 'bare Koa, bytes')} (the stricter ceiling)`,
      `  API key/bare-Koa ${(rate('API key') / rate('bare Koa')).toFixed(3)} overall; ${spreadOf(perRound('API key'))}`,
      `  JWT, none kept/bare-Koa ${aim('JWT, none kept', 'bare Koa')}; ${p99Aim('JWT, none kept')}`,
      `  CPU of the serving process per call: JWT ${cpuPerCall('JWT').toFixed(0)} us, API key ${cpuPerCall('API key').toFixed(0)} us, JWT none kept ${cpuPerCall('JWT, none kept').toFixed(0)} us, bare Koa ${cpuPerCall('bare Koa').toFixed(0)} us, bare Koa bytes ${cpuPerCall('bare Koa, bytes').toFixed(0)} us ` +
        `(bare/JWT ${(cpuPerCall('bare Koa') / cpuPerCall('JWT')).toFixed(3)}, bare bytes/JWT ${(cpuPerCall('bare Koa, bytes') / cpuPerCall('JWT')).toFixed(3)}: the ratios with the machine's other load taken out)`,
      `  ${ROUNDS} rounds of ${ROUND_MS} ms per contender, taking turns (first one rotating), after ${WARMUP_MS} ms of warm-up each; every answer checked (200, success true)`,
    ];
  } finally {
    await load?.stop();
    agent.destroy();
    await closeServer(bare);
    await started?.stop();
  }
}

/** A contender: a named URL the load generator GETs with these headers. */
export interface ProjectInfoContender {
  name: string;
  url: string;
  headers: Record<string, string>;
  uniqueParameter?: string;
}

/**
 * The five contenders (the header comment says what each is), the ceilings served by a bare Koa
 * server started here: one middleware answering the service's own JWT answer, stringified per
 * request, or (under /bytes) as bytes made once. Close `bare` when done.
 */
export async function projectInfoContenders(
  api: string,
  project: { path: string; jwtHeaders: Record<string, string>; keyHeaders: Record<string, string>; jwtAnswer: string },
): Promise<{ contenders: ProjectInfoContender[]; bare: http.Server }> {
  const { path, jwtHeaders, keyHeaders, jwtAnswer } = project;
  const copy: unknown = JSON.parse(jwtAnswer);
  const bytes = Buffer.from(jwtAnswer);
  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.path.endsWith('/bytes')) {
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = bytes;
    } else ctx.body = copy;
  });
  const bare = http.createServer(app.callback());
  const bareUrl = `http://${HOST}:${await listen(bare)}`;
  return {
    bare,
    contenders: [
      { name: 'JWT', url: `${api}${path}`, headers: jwtHeaders },
      { name: 'API key', url: `${api}${path}`, headers: keyHeaders },
      { name: 'JWT, none kept', url: `${api}${path}`, headers: jwtHeaders, uniqueParameter: 'call' },
      { name: 'bare Koa', url: `${bareUrl}${path}`, headers: jwtHeaders },
      { name: 'bare Koa, bytes', url: `${bareUrl}${path}/bytes`, headers: jwtHeaders },
    ],
  };
}

/** The answer of project information as the bench reads it. */
export interface ProjectInfoAnswer {
  project?: { collaborators?: unknown[] };
  dataSummary?: { dataCount?: number; labels?: unknown[] };
  dataSummaryPerCategory?: Record<string, { dataCount?: number }>;
  impulse?: { created?: boolean };
}

/**
 * The bench's project, made through the service's own API: an owner, two collaborators, samples
 * under several labels, one impulse; and one answer each way (JWT, API key), checked.
 */
export async function realisticProject(agent: http.Agent, service: RunningService) {
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
  // Ingestion answers on durability: let the read models apply every sample before the answer is taken.
  if (!(await service.readModels.waitFor((await service.stores.events.headPosition())!, 60_000))) throw new Error("the read models did not reach the log's head within 60 s");

  // One real answer each way, for the bare handler and for the record.
  const jwtHeaders = { 'x-jwt-token': token };
  const keyHeaders = { 'x-api-key': apiKey };
  const path = `/v1/api/${projectId}`;
  const jwtAnswer = expectOk(await send(api, 'GET', path, jwtHeaders), `GET ${path} (JWT)`);
  const keyAnswer = expectOk(await send(api, 'GET', path, keyHeaders), `GET ${path} (API key)`);
  for (const answer of [jwtAnswer, keyAnswer]) if (!answer.startsWith(OK_PREFIX)) throw new Error(`GET ${path} answered without success: ${answer.slice(0, 300)}`);
  const info = JSON.parse(jwtAnswer) as ProjectInfoAnswer;
  return { path, jwtHeaders, keyHeaders, jwtAnswer, keyAnswer, info };
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

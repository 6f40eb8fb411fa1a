// What the HTTP benchmarks share: a keep-alive client, timed rounds of concurrent calls, and the
// way figures and ratios are printed.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { loadConfig, startService, type RunningService, type StartOptions } from '../main';

export const HOST = '127.0.0.1';
export const JSON_HEADERS = { 'content-type': 'application/json' };

export interface Rate {
  ops: number;
  seconds: number;
  /** Sum of each call's own duration, for the mean latency. */
  latencySeconds: number;
}

/** One call by client `client`; throws unless it succeeded. */
export type Op = (client: number) => Promise<void>;

export { request, type Reply } from './httpRequest';
import { request, type Reply } from './httpRequest';
import type { RoundResult } from './loadGenerator';

export function expectOk(reply: Reply, what: string): string {
  if (reply.status !== 200) throw new Error(`${what} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
  return reply.text;
}

export function listen(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => resolve((server.address() as AddressInfo).port));
  });
}

/** `clients` loops calling `op` until the deadline; the round ends when the last call returns. */
export async function measure(op: Op, roundMs: number, clients: number): Promise<Rate> {
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(roundMs) * 1_000_000n;
  let ops = 0;
  let latency = 0n;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (process.hrtime.bigint() < deadline) {
        const t = process.hrtime.bigint();
        await op(client);
        latency += process.hrtime.bigint() - t;
        ops += 1;
      }
    }),
  );
  return { ops, seconds: Number(process.hrtime.bigint() - start) / 1e9, latencySeconds: Number(latency) / 1e9 };
}

export function empty(): Rate {
  return { ops: 0, seconds: 0, latencySeconds: 0 };
}

export function add(total: Rate, rate: Rate): void {
  total.ops += rate.ops;
  total.seconds += rate.seconds;
  total.latencySeconds += rate.latencySeconds;
}

export function perSecond(rate: Rate): number {
  return rate.ops / rate.seconds;
}

export function ratio(a: Rate, b: Rate): string {
  const r = perSecond(a) / perSecond(b);
  return r < 0.01 ? r.toFixed(4) : r.toFixed(3);
}

export function spread(ratios: readonly number[]): string {
  const sorted = [...ratios].sort((x, y) => x - y);
  const q = (p: number) => {
    const v = sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
    return v < 0.01 ? v.toFixed(4) : v.toFixed(3);
  };
  return `per round median ${q(0.5)}, middle half ${q(0.25)}-${q(0.75)}`;
}

export function describe(rate: Rate): string {
  return `${Math.round(perSecond(rate)).toLocaleString('en-US')}/s`;
}

export function ms(seconds: number): string {
  return `${(seconds * 1000).toFixed(1)} ms`;
}

export function pct(fraction: number): string {
  return `${Math.round(fraction * 100)}%`;
}

/** A read store a benchmark runs the service on. */
export interface BenchStore {
  /** For the printed lines. */
  label: string;
  env: Record<string, string>;
}

/** Settings that choose the read store, taken from the bench's own environment (READ_STORE...). */
export function readStoreEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && e[0].startsWith('READ_STORE')));
}

/**
 * The embedded default (with whatever READ_STORE selects) and, when MONGO_URL is set, the MongoDB
 * read and blob stores on a database of their own (FerretDB in CI: an indicator, slower than MongoDB).
 */
export function benchStores(): BenchStore[] {
  const configured = readStoreEnv();
  const stores: BenchStore[] = [{ label: `embedded default${Object.keys(configured).length ? ` (${Object.entries(configured).map(([k, v]) => `${k}=${v}`).join(' ')})` : ' (SQLite read models)'}`, env: configured }];
  const mongoUrl = process.env.MONGO_URL;
  if (mongoUrl) stores.push({ label: `MongoDB read and blob stores at MONGO_URL`, env: { MONGO_URL: mongoUrl, MONGO_DB: `bench_${randomBytes(5).toString('hex')}` } });
  return stores;
}

/** The whole service in this process, on a fresh data folder and free ports: the embedded default unless `store` says otherwise. */
export async function startBenchService(name: string, store: BenchStore = { label: 'embedded default', env: readStoreEnv() }, options: StartOptions = {}): Promise<{ service: RunningService; dataDir: string; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  const cleanUp = async () => {
    rmSync(dataDir, { recursive: true, force: true });
    const db = store.env.MONGO_DB;
    if (store.env.MONGO_URL && db) {
      const client = await MongoClient.connect(store.env.MONGO_URL);
      try {
        for (const name of [db, `${db}_keys`, `${db}_blobs`]) await client.db(name).dropDatabase();
      } finally {
        await client.close();
      }
    }
  };
  try {
    const service = await startService(
      loadConfig({ API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...store.env }),
      undefined,
      options,
    );
    return {
      service,
      dataDir,
      async stop() {
        await service.stop();
        await cleanUp();
      },
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

/** Closes a bare comparison server and its keep-alive connections. */
export async function closeServer(server: http.Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Nearest-rank quantiles (each p in 0..1) of `values`, sorted once; NaN for no values. */
export function quantiles(values: readonly number[], ps: readonly number[]): number[] {
  const sorted = Float64Array.from(values).sort();
  return ps.map((p) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!));
}

/** The password of every user the benchmarks sign up. */
export const BENCH_PASSWORD = 'correct horse battery';

/** Signs a user up through the API; answers their id. */
export async function signUp(agent: http.Agent, api: string, username: string): Promise<number> {
  const body = JSON.stringify({ name: `Bench ${username}`, username, email: `${username}@example.com`, password: BENCH_PASSWORD, privacyPolicy: true, turnstileResponse: 'test' });
  const answer = expectOk(await request(agent, new URL('/v1/api-user-create', api), 'POST', JSON_HEADERS, body), `sign-up of ${username}`);
  return Number((JSON.parse(answer) as { id: number }).id);
}

/** A signed-up user's JWT and a new project of theirs, with its development API key. */
export async function ownerWithProject(agent: http.Agent, api: string, username: string, projectName: string): Promise<{ token: string; projectId: number; apiKey: string }> {
  await signUp(agent, api, username);
  const login = expectOk(await request(agent, new URL('/v1/api-login', api), 'POST', JSON_HEADERS, JSON.stringify({ username, password: BENCH_PASSWORD })), 'login');
  const token = String((JSON.parse(login) as { token: string }).token);
  const created = expectOk(
    await request(agent, new URL('/v1/api/projects/create', api), 'POST', { ...JSON_HEADERS, 'x-jwt-token': token }, JSON.stringify({ projectName })),
    'project create',
  );
  const project = JSON.parse(created) as { id: number; apiKey: string };
  if (!project.apiKey) throw new Error('project create answered no API key');
  return { token, projectId: Number(project.id), apiKey: String(project.apiKey) };
}

/** What contenders' rounds (roundsInTurn) say, by contender name: the figures every bench prints alike. */
export function turnFigures(results: ReadonlyMap<string, readonly RoundResult[]>) {
  const of = (name: string) => {
    const rs = results.get(name);
    if (!rs) throw new Error(`no rounds of ${name}`);
    return rs;
  };
  const rate = (name: string) => of(name).reduce((a, r) => a + r.ops, 0) / of(name).reduce((a, r) => a + r.seconds, 0);
  const latencies = (name: string) => of(name).flatMap((r) => r.latencies);
  return {
    /** Calls per second over all rounds. */
    rate,
    /** Per round, the contender's rate over `over`'s in the same turn. */
    perRound: (name: string, over: string) => of(name).map((r, i) => r.ops / r.seconds / (of(over)[i]!.ops / of(over)[i]!.seconds)),
    /** Rate and latency quantiles in one line. */
    lat(name: string): string {
      const all = latencies(name);
      const [p50, p99, max] = quantiles(all, [0.5, 0.99, 1]);
      return `${Math.round(rate(name)).toLocaleString('en-US')}/s, p50 ${p50!.toFixed(2)} ms, p99 ${p99!.toFixed(2)} ms, max ${max!.toFixed(1)} ms (${all.length.toLocaleString('en-US')} calls)`;
    },
    p99: (name: string) => quantiles(latencies(name), [0.99])[0]!,
    /** CPU of the serving process per call, in microseconds. */
    cpuPerCall: (name: string) => (of(name).reduce((a, r) => a + r.hostCpuSeconds, 0) / of(name).reduce((a, r) => a + r.ops, 0)) * 1e6,
    spreadOf(ratios: number[]): string {
      const [q1, median, q3] = quantiles(ratios, [0.25, 0.5, 0.75]);
      return `per round median ${median!.toFixed(3)}, middle half ${q1!.toFixed(3)}-${q3!.toFixed(3)}`;
    },
  };
}

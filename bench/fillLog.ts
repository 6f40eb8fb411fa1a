// Fills a data folder with a given number of events, through the command path a device's upload
// takes (receive, parse and verify the signature, store the file, IdAllocator, the sample decider
// and the event store), minus HTTP: small signed JSON samples, FILL_CONCURRENCY in flight, so the
// SQLite event and blob stores group their commits as they do under load. The owner, project and
// keys are made first through the management API of a service started on the folder, which is then
// stopped: the fill appends to the log alone (no projection runs meanwhile). What the restart,
// memory and rebuild figures need to log in again is kept in the folder (FILL_FILE).
//
// `npx tsx bench/fillLog.ts <data folder> [events]` (default 1,000,000) fills a folder for later
// runs, e.g. `BENCH_DATA_DIR=<folder> npm run bench -- --only restart`.
import { createHash, createHmac } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { IdAllocator } from '../commands/idAllocator';
import { UniquenessReservations } from '../commands/uniqueness';
import { ingestFile, type IngestDeps, type UploadTarget } from '../ingestion/ingestFile';
import { KeyedLock } from '../ingestion/keyedLock';
import { receiveBody } from '../ingestion/receiveFile';
import { SampleParser } from '../ingestion/sampleParser';
import type { UploadOptions } from '../ingestion/uploadHeaders';
import { loadConfig, openStores, startService } from '../main';
import { SampleQueries } from '../projections/samples/sampleQueries';
import type { EventStore } from '../stores/eventstore/eventStore';
import { BENCH_PASSWORD, HOST, expectOk, ownerWithProject, request } from './benchKit';

/** What a filled folder holds besides its data: enough to log in and read it back. */
export interface FilledLog {
  username: string;
  password: string;
  projectId: number;
  apiKey: string;
  /** Events in the log once filled (the setup's included). */
  events: number;
  samples: number;
}

export const FILL_FILE = 'bench-fill.json';
const FILL_CONCURRENCY = 256;
/** FerretDB's SQLite backend answers SQLITE_BUSY to 256 GridFS writes at once. */
const FILL_CONCURRENCY_MONGO = 16;
const FILL_ID_BLOCK = 1000;
const ROWS = 10;
const SENSORS = ['accX', 'accY', 'accZ'];
const OPTIONS: UploadOptions = { label: undefined, disallowDuplicates: false, addDateId: false, metadata: {}, uploadSource: null, deviceType: null };

/** The environment every bench process of a data folder shares (the read store as configured outside). */
export function serviceEnv(dataDir: string): Record<string, string> {
  const passed = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && /^(READ_STORE|MONGO_URL|MONGO_DB|EVENTSTORE_URL)/.test(k))) as Record<string, string>;
  // Never the installation's own database: one per data folder, so a filled folder finds its read models again.
  if (passed.MONGO_URL && !passed.MONGO_DB) passed.MONGO_DB = `bench_${createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 10)}`;
  return { ...passed, API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
}

/** The filled log's description, when `dataDir` was filled before with at least `events`. */
export function filledBefore(dataDir: string, events: number): FilledLog | undefined {
  const file = join(dataDir, FILL_FILE);
  if (!existsSync(file)) return undefined;
  const filled = JSON.parse(readFileSync(file, 'utf8')) as FilledLog;
  return filled.events >= events ? filled : undefined;
}

/** Counts what goes through `appendToStream`, so the fill knows its events exactly. */
function counting(events: EventStore, count: (n: number) => void): EventStore {
  return new Proxy(events, {
    get(target, key, receiver) {
      if (key === 'appendToStream') {
        return async (...args: Parameters<EventStore['appendToStream']>) => {
          const result = await target.appendToStream(...args);
          count(args[1].length);
          return result;
        };
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** serviceEnv on the embedded stores alone, whatever the environment names (a test of the SQLite default). */
export function embeddedServiceEnv(dataDir: string): Record<string, string> {
  const { READ_STORE: _r, MONGO_URL: _m, MONGO_DB: _d, EVENTSTORE_URL: _e, ...embedded } = serviceEnv(dataDir);
  return embedded;
}

/** @param env the service's environment for the setup and the stores (serviceEnv: the read store as configured outside). */
export async function fillLog(dataDir: string, events: number, progress: (line: string, done: boolean) => void = () => {}, env: Record<string, string> = serviceEnv(dataDir)): Promise<FilledLog & { seconds: number }> {
  // 1. The owner, the project and its keys, through the management API.
  const agent = new http.Agent({ keepAlive: true });
  const username = 'benchfill';
  let setup: { projectId: number; apiKey: string; apiKeyId: number; hmacKey: string; hmacKeyId: number };
  const service = await startService(loadConfig(env));
  try {
    const api = service.apiUrl!;
    const { token, projectId, apiKey } = await ownerWithProject(agent, api, username, 'Bench filled log');
    const auth = { 'x-jwt-token': token };
    const devkeys = JSON.parse(expectOk(await request(agent, new URL(`/v1/api/${projectId}/devkeys`, api), 'GET', auth), 'devkeys')) as { hmacKey: string };
    const keys = JSON.parse(expectOk(await request(agent, new URL(`/v1/api/${projectId}/apikeys`, api), 'GET', auth), 'apikeys')) as { apiKeys: { id: number }[] };
    const hmacKeys = JSON.parse(expectOk(await request(agent, new URL(`/v1/api/${projectId}/hmackeys`, api), 'GET', auth), 'hmackeys')) as { hmacKeys: { id: number }[] };
    setup = { projectId, apiKey, apiKeyId: Number(keys.apiKeys[0]!.id), hmacKey: devkeys.hmacKey, hmacKeyId: Number(hmacKeys.hmacKeys[0]!.id) };
  } finally {
    agent.destroy();
    await service.stop();
  }

  // 2. The samples, through ingestFile on the stores alone.
  const stores = await openStores(loadConfig(env));
  const parser = new SampleParser();
  const started = performance.now();
  let appended = 0;
  for await (const _ of stores.events.readAll()) appended += 1;
  const setupEvents = appended;
  try {
    const events$ = counting(stores.events, (n) => (appended += n));
    const deps: IngestDeps = {
      events: events$,
      // The service reserves 20 ids an append; one append a thousand keeps the fill from waiting on them.
      ids: new IdAllocator(events$, FILL_ID_BLOCK),
      blobs: stores.blobs,
      // Neither is reached without x-disallow-duplicates.
      samples: new SampleQueries(stores.readStore),
      sync: { waitFor: async () => true },
      settleTimeoutMs: 0,
      contentLocks: new KeyedLock(),
      parser,
      reservations: new UniquenessReservations(events$, stores.keys),
    };
    const target: UploadTarget = {
      projectId: setup.projectId,
      apiKeyId: setup.apiKeyId,
      category: 'training',
      split: false,
      hmacKeys: [setup.hmacKey],
      hmacKeyIds: [setup.hmacKeyId],
      requestId: 'bench-fill',
    };
    let samples = 0;
    let lastReport = 0;
    const report = (done: boolean) => {
      const seconds = (performance.now() - started) / 1000;
      progress(`filled ${appended.toLocaleString('en-US')} of ${events.toLocaleString('en-US')} events (${samples.toLocaleString('en-US')} samples) in ${seconds.toFixed(0)} s, ${Math.round((appended - setupEvents) / seconds).toLocaleString('en-US')} events/s`, done);
    };
    await Promise.all(
      Array.from({ length: env.MONGO_URL ? FILL_CONCURRENCY_MONGO : FILL_CONCURRENCY }, async () => {
        while (appended < events) {
          const n = samples++;
          const body = Buffer.from(signedSample(setup.hmacKey, n));
          const received = await receiveBody(Readable.from([body]), body.length, dataDir);
          const fileName = `${n % 2 === 0 ? 'idle' : 'wave'}.${n}.json`;
          await ingestFile(deps, target, OPTIONS, { received, fileName, declaredType: 'application/json' });
          if (performance.now() - lastReport > 1000) {
            lastReport = performance.now();
            report(false);
          }
        }
      }),
    );
    report(true);
    const filled: FilledLog = { username, password: BENCH_PASSWORD, projectId: setup.projectId, apiKey: setup.apiKey, events: appended, samples };
    writeFileSync(join(dataDir, FILL_FILE), JSON.stringify(filled));
    return { ...filled, seconds: (performance.now() - started) / 1000 };
  } finally {
    await parser.close();
    await stores.close();
  }
}

/** A JSON sample signed as the device library signs it (sdk-reference 4.1); `n` makes it unique. */
export function signedSample(hmacKey: string, n: number): string {
  const values = Array.from({ length: ROWS }, (_, row) => [n + row / 10, Math.round(Math.sin(n + row) * 1000) / 100, -row * 0.25]);
  const json = JSON.stringify({
    protected: { ver: 'v1', alg: 'HS256', iat: 1_700_000_000 + n },
    signature: '0'.repeat(64),
    payload: { device_name: 'bench-device', device_type: 'BENCH', interval_ms: 10, sensors: SENSORS.map((name) => ({ name, units: 'm/s2' })), values },
  });
  return json.replace('0'.repeat(64), createHmac('sha256', hmacKey).update(json).digest('hex'));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [dir, count] = process.argv.slice(2);
  if (!dir) throw new Error('usage: npx tsx bench/fillLog.ts <data folder> [events, default 1000000]');
  const events = Number(count ?? 1_000_000);
  if (!Number.isInteger(events) || events <= 0) throw new Error(`events must be a positive integer, got ${count}`);
  const tty = process.stderr.isTTY;
  const filled = await fillLog(dir, events, (line, done) => process.stderr.write(tty ? `\r${line}${done ? '\n' : ''}` : `${line}\n`));
  console.log(JSON.stringify(filled));
}

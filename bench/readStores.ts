// The read stores compared on the same read models, in one run: the SQLite store (the embedded
// default) against the memory store (the former default, all documents in the heap).
// 1. A data folder is filled through the service's own APIs: an owner with two projects, samples
//    through the ingestion API (32 connections; READ_BENCH_SAMPLES, default 20,000, four fifths in
//    the first project, a fifth of each labelled for testing), one impulse.
//    Then the service is started again on that folder, and on an empty one, timed.
// 2. The log is replayed into each store by the projection runner, timed: the rebuild rate of each
//    (events/s), and the heap each holds after a full GC (memory grows with the data on one only).
// 3. Jobs and their output lines, which need job runners to come from the log, are written as
//    documents of the jobs read model into both stores alike (2,000 jobs, 10 lines each).
// 4. The reads the API makes for project information, the raw-data listing, the jobs and the DSP
//    read models (through the same *Queries classes), one after another, taking turns round by
//    round: ratios SQLite / memory of reads per second, the median and spread over the rounds. The
//    SQLite store answers repeated reads from a bounded cache until the table changes; the same file
//    opened without that cache gives the figure for reads that miss it (right after a write).
// The stores are called in-process, without HTTP: the figures are the read stores' own.
import http from 'node:http';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import pino from 'pino';
import { ApiKeyQueries } from '../projections/apiKeys/apiKeyQueries';
import { DeviceQueries } from '../projections/devices/deviceQueries';
import { DspFeaturesQueries } from '../projections/dspFeatures/dspFeaturesQueries';
import { allProjections } from '../projections';
import { ImpulseQueries } from '../projections/impulses/impulseQueries';
import { JOB_OUTPUT, JOBS } from '../projections/jobs/jobDocument';
import { JobQueries } from '../projections/jobs/jobQueries';
import { ProjectionRunner } from '../projections/projectionRunner';
import { ProjectQueries } from '../projections/projects/projectQueries';
import { readModelIndexes } from '../projections/readModelIndexes';
import { SampleQueries } from '../projections/samples/sampleQueries';
import { UserQueries } from '../projections/users/userQueries';
import { openStores, READ_MODELS_GROUP_COMMIT_MS } from '../service/composition';
import { loadConfig } from '../service/configuration';
import { startService } from '../main';
import { MemoryReadStore } from '../stores/readstore/memoryReadStore';
import type { ReadStore } from '../stores/readstore/readStore';
import { SqliteReadStore } from '../stores/readstore/sqliteReadStore';
import type { BenchResult } from './benchResult';
import { HOST, JSON_HEADERS, expectOk, ownerWithProject, request, spread, startBenchService } from './benchKit';

const CONNECTIONS = 32;
const LABELS = ['idle', 'wave', 'updown', 'circle', 'snake'];
const JOBS_COUNT = 2000;
const LINES_PER_JOB = 10;
const ROUNDS = 6;
const ROUND_MS = 500;

const IMPULSE = {
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY', 'accZ'], windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 100 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX', 'accY', 'accZ'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
};

function smallSample(n: number): string {
  const values = Array.from({ length: 10 }, (_, row) => [n + row / 10, Math.round(Math.sin(n + row) * 1000) / 100, -row * 0.25]);
  return JSON.stringify({
    protected: { ver: 'v1', alg: 'none', iat: Math.floor(Date.now() / 1000) },
    signature: '0'.repeat(64),
    payload: { device_name: `bench-device-${n % 4}`, device_type: 'BENCH', interval_ms: 10, sensors: ['accX', 'accY', 'accZ'].map((name) => ({ name, units: 'm/s2' })), values },
  });
}

/** A full collection, for heap figures that mean something (the bench is run by tsx, without --expose-gc). */
function collectGarbage(): () => void {
  v8.setFlagsFromString('--expose_gc');
  return vm.runInNewContext('gc') as () => void;
}

interface Group {
  name: string;
  read: (store: ReadStore, n: number) => Promise<unknown>;
}

async function readsPerSecond(group: Group, store: ReadStore): Promise<number> {
  const deadline = process.hrtime.bigint() + BigInt(ROUND_MS) * 1_000_000n;
  const start = process.hrtime.bigint();
  let n = 0;
  while (process.hrtime.bigint() < deadline) await group.read(store, n++);
  return n / (Number(process.hrtime.bigint() - start) / 1e9);
}

export async function benchReadStores(): Promise<BenchResult> {
  const total = Number(process.env.READ_BENCH_SAMPLES ?? 20_000);
  const gc = collectGarbage();
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const started = await startBenchService('readstores');
  const { dataDir } = started;
  const lines: string[] = [];
  let memory: MemoryReadStore | undefined;
  let sqlite: SqliteReadStore | undefined;
  let uncached: SqliteReadStore | undefined;
  let stores: Awaited<ReturnType<typeof openStores>> | undefined;
  try {
    const api = started.service.apiUrl!;
    const ingestion = started.service.ingestionUrl!;
    const first = await ownerWithProject(agent, api, 'readowner', 'Read stores A');
    const second = await ownerWithProject(agent, api, 'readother', 'Read stores B');
    expectOk(await request(agent, new URL(`/v1/api/${first.projectId}/impulse`, api), 'POST', { ...JSON_HEADERS, 'x-jwt-token': first.token }, JSON.stringify(IMPULSE)), 'impulse');
    const fillStart = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        for (let n = next++; n < total; n = next++) {
          const apiKey = n % 5 === 4 ? second.apiKey : first.apiKey;
          const category = n % 25 >= 20 ? 'testing' : 'training';
          const fileName = `${LABELS[n % LABELS.length]}.${n}.json`;
          const reply = await request(agent, new URL(`/api/${category}/data`, ingestion), 'POST', { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': fileName }, smallSample(n));
          if (reply.status !== 200) throw new Error(`ingestion answered ${reply.status}: ${reply.text.slice(0, 200)}`);
        }
      }),
    );
    const fillMs = Date.now() - fillStart;
    await started.service.stop();

    // A restart on this data against a start on an empty folder: the read models resume from their
    // checkpoints, so the log is not replayed.
    const startOn = async (dir: string): Promise<number> => {
      const t = process.hrtime.bigint();
      const running = await startService(loadConfig({ API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST, DATA_DIR: dir, LOG_LEVEL: 'silent' }), pino({ level: 'silent' }));
      const seconds = Number(process.hrtime.bigint() - t) / 1e9;
      await running.stop();
      return seconds;
    };
    const emptyDir = mkdtempSync(path.join(tmpdir(), 'bench-readstores-empty-'));
    const starts = { restart: [] as number[], empty: [] as number[] };
    try {
      for (let i = 0; i < 3; i++) {
        starts.restart.push(await startOn(dataDir));
        starts.empty.push(await startOn(emptyDir));
      }
    } finally {
      rmSync(emptyDir, { recursive: true, force: true });
    }

    // The same log, replayed into each store.
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', READ_STORE: 'memory', HOST });
    stores = await openStores(config);
    const head = (await stores.events.headPosition()) ?? 0n;
    const replay = async (store: ReadStore): Promise<number> => {
      const runner = new ProjectionRunner(stores!.events, store, allProjections, pino({ level: 'silent' }));
      const t = process.hrtime.bigint();
      await runner.start();
      await runner.stop();
      if ((await runner.failures()).length > 0) throw new Error('a projection failed during the replay');
      return Number(process.hrtime.bigint() - t) / 1e9;
    };
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const sqliteFile = path.join(dataDir, 'bench-read-models.sqlite');
    sqlite = SqliteReadStore.open(sqliteFile, { indexes: readModelIndexes, groupCommitMs: READ_MODELS_GROUP_COMMIT_MS });
    const sqliteSeconds = await replay(sqlite);
    gc();
    const heapWithSqlite = process.memoryUsage().heapUsed;
    memory = stores.readStore as MemoryReadStore;
    const memorySeconds = await replay(memory);
    gc();
    const heapWithBoth = process.memoryUsage().heapUsed;

    // Jobs and their output, alike in both.
    const jobWrites = async (store: ReadStore) => {
      const jobs = store.collection(JOBS);
      const output = store.collection(JOB_OUTPUT);
      for (let id = 1; id <= JOBS_COUNT; id++) {
        const created = new Date(Date.UTC(2026, 0, 1) + id * 60_000).toISOString();
        const projectId = id % 5 === 4 ? second.projectId : first.projectId;
        const state = id > JOBS_COUNT - 3 ? 'started' : 'finished';
        await jobs.updateOne(
          { _id: id },
          { $setOnInsert: { id, projectId, organizationId: null, category: 'Generate features', categoryKey: 'generate-features', key: `k${id % 7}`, state, created, started: created, finished: state === 'finished' ? created : null, finishedSuccessful: state === 'finished' ? id % 9 !== 0 : null, cancelled: false, cancelRequested: false, reason: null, jobNotificationUids: [], computeTimeMs: 1200, createdByUserId: 1, categoryCount: id, workerId: 'w1', attempt: 1, lastSignOfLife: created, outputLineCount: LINES_PER_JOB, _position: '0' } },
          { upsert: true },
        );
        for (let line = 0; line < LINES_PER_JOB; line++) {
          await output.updateOne({ _id: `${id}:${String(line).padStart(20, '0')}:0000` }, { $setOnInsert: { jobId: id, created, data: `step ${line} of job ${id}: processing windows`, logLevel: line % 4 === 0 ? 'warn' : 'info', _position: '0' } }, { upsert: true });
        }
      }
    };
    await jobWrites(memory);
    await jobWrites(sqlite);
    sqlite.commitGroup();
    uncached = SqliteReadStore.open(sqliteFile, { indexes: readModelIndexes, answerCache: false });

    const projectId = first.projectId;
    const trainingCount = await new SampleQueries(sqlite).count(projectId, { category: 'training' });
    const groups: Group[] = [
      {
        name: 'project information',
        read: async (s) => {
          const project = await new ProjectQueries(s).byId(projectId);
          await Promise.all([
            new UserQueries(s).byIds(project?.collaboratorIds ?? []),
            new DeviceQueries(s).forProject(projectId),
            new ImpulseQueries(s).statusOf(projectId),
            new JobQueries(s).computeTimeUsedMs(projectId, new Date()),
            new ApiKeyQueries(s).forProject(projectId),
          ]);
        },
      },
      {
        name: 'raw-data listing (a page of 50 and the count)',
        read: async (s, n) => {
          const pages = Math.max(1, Math.floor(trainingCount / 50));
          const q = new SampleQueries(s);
          await Promise.all([q.list(projectId, { category: 'training' }, { limit: 50, offset: (n % pages) * 50 }), q.count(projectId, { category: 'training' })]);
        },
      },
      {
        name: 'raw-data listing of every category (first page)',
        read: (s) => new SampleQueries(s).list(projectId, { category: 'all' }, { limit: 50, offset: 0 }),
      },
      {
        name: 'jobs (a page of 20 with the total, active jobs, a job\'s output)',
        read: async (s, n) => {
          const q = new JobQueries(s);
          await Promise.all([q.list({ projectId }, { limit: 20, offset: 0 }), q.active({ projectId }), q.output(1 + (n % JOBS_COUNT), { limit: 100 })]);
        },
      },
      {
        name: 'DSP read models (features of a block, its impulse)',
        read: async (s) => {
          await Promise.all([new DspFeaturesQueries(s).current(projectId, 2), new ImpulseQueries(s).withDspBlock(projectId, 2), new ImpulseQueries(s).byId(projectId)]);
        },
      },
    ];
    // Same answers first: a fast store that answers otherwise would be no result.
    for (const group of groups) {
      const answers = [memory, sqlite, uncached].map(async (store) => JSON.stringify(await captured(group, store)));
      const [a, b, c] = await Promise.all(answers);
      if (a !== b || a !== c) throw new Error(`${group.name}: the stores answered differently`);
    }
    const contenders = { memory, sqlite, uncached } as const;
    const ratios = new Map<string, { sqlite: number[]; uncached: number[] }>(groups.map((g) => [g.name, { sqlite: [], uncached: [] }]));
    const rates = new Map<string, Record<keyof typeof contenders, number>>(groups.map((g) => [g.name, { memory: 0, sqlite: 0, uncached: 0 }]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const group of groups) {
        // Rotate which goes first, so none always gets the warmer caches.
        const names = Object.keys(contenders) as (keyof typeof contenders)[];
        const order = [...names.slice(round % 3), ...names.slice(0, round % 3)];
        const got = { memory: 0, sqlite: 0, uncached: 0 };
        for (const which of order) got[which] = await readsPerSecond(group, contenders[which]);
        ratios.get(group.name)!.sqlite.push(got.sqlite / got.memory);
        ratios.get(group.name)!.uncached.push(got.uncached / got.memory);
        const r = rates.get(group.name)!;
        for (const which of names) r[which] += got[which] / ROUNDS;
      }
    }

    const events = Number(head);
    const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
    lines.push(`data: ${total.toLocaleString('en-US')} samples ingested in ${(fillMs / 1000).toFixed(1)} s, ${events.toLocaleString('en-US')} events; ${JOBS_COUNT} jobs with ${LINES_PER_JOB} output lines each`);
    const best = (values: number[]) => Math.min(...values);
    lines.push(`start: restart on this data ${(best(starts.restart) * 1000).toFixed(0)} ms vs an empty folder ${(best(starts.empty) * 1000).toFixed(0)} ms (best of 3 each), ratio ${(best(starts.restart) / best(starts.empty)).toFixed(2)}`);
    lines.push(`rebuild (replay of the log): SQLite ${Math.round(events / sqliteSeconds).toLocaleString('en-US')} events/s, memory ${Math.round(events / memorySeconds).toLocaleString('en-US')} events/s`);
    const onDisk = statSync(sqliteFile).size + (existsSync(`${sqliteFile}-wal`) ? statSync(`${sqliteFile}-wal`).size : 0);
    lines.push(`heap held after a full GC: SQLite store +${mb(heapWithSqlite - heapBefore)}, memory store +${mb(heapWithBoth - heapWithSqlite)}; SQLite file and WAL ${mb(onDisk)}`);
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!.toFixed(2);
    for (const group of groups) {
      const r = rates.get(group.name)!;
      const { sqlite: cachedRatios, uncached: uncachedRatios } = ratios.get(group.name)!;
      const perSecond = (n: number) => Math.round(n).toLocaleString('en-US');
      lines.push(`${group.name}: SQLite/memory ${median(cachedRatios)} (${spread(cachedRatios)}), without the answer cache ${median(uncachedRatios)} (${spread(uncachedRatios)}); reads/s ${perSecond(r.sqlite)} / ${perSecond(r.uncached)} vs memory ${perSecond(r.memory)}`);
    }
    return { name: 'read stores: SQLite (embedded default) vs memory, same read models', lines };
  } finally {
    agent.destroy();
    await sqlite?.close();
    await uncached?.close();
    await stores?.close();
    await started.service.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function captured(group: Group, store: ReadStore): Promise<unknown[]> {
  const out: unknown[] = [];
  const recording = new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'collection') return Reflect.get(target, property, receiver);
      return (name: string) => {
        const collection = target.collection(name);
        return new Proxy(collection, {
          get(c, method, r) {
            const value = Reflect.get(c, method, r) as unknown;
            if (typeof value !== 'function') return value;
            return async (...args: unknown[]) => {
              const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(c, args);
              out.push({ name, method, args, result });
              return result;
            };
          },
        });
      };
    },
  });
  await group.read(recording, 0);
  // Reads run concurrently within a group: compare them in a fixed order.
  return out.map((o) => JSON.stringify(o)).sort();
}

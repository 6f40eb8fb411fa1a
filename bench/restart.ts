// The restart, memory and rebuild figures. A data folder is filled with BENCH_EVENTS events
// (default 20,000; the issue's figure is 1,000,000) through the command path (bench/fillLog.ts), or
// BENCH_DATA_DIR names one filled before. The service then runs as a process of its own
// (`node --import tsx main.ts`, no npm or shell wrapper), on whatever read store the environment
// selects (READ_STORE..., MONGO_URL), which the service's start line names and this bench prints:
// - its first start after the fill, which applies the whole log to the read models (every start on
//   the memory store does; a persistent store only this once): events/s;
// - restarts, taking turns with starts on an empty folder: from spawn to the first answer of
//   GET /v1/api/{projectId} showing every sample (the empty start: to its first GET /health);
// - the RSS of each, once started and idle, filled vs empty;
// - `main.ts rebuild` on the filled folder: events/s, where the read store has a rebuild.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import type { BenchResult } from './benchResult';
import { request } from './benchKit';
import { fillLog, filledBefore, serviceEnv, type FilledLog } from './fillLog';
import { spawnService, stopService, type Started } from './serviceProcess';

const DEFAULT_EVENTS = 20_000;
/** Alternating rounds of restart and empty start; one past LARGE_LOG events, where a round takes minutes. */
const ROUNDS = 3;
const LARGE_LOG = 100_000;
/** How long a started service idles before its RSS is read, and how many readings (the lowest counts). */
const IDLE_MS = 2000;
const RSS_READINGS = 5;
const AIM_RESTART = 1.5;
const AIM_MEMORY_MB = 64;
const AIM_REBUILD = 50_000;

/** The lowest of a few readings of the process's resident set (/proc/<pid>/status VmRSS). */
async function idleRss(pid: number): Promise<number> {
  await sleep(IDLE_MS);
  let lowest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < RSS_READINGS; i++) {
    const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    lowest = Math.min(lowest, kb * 1024);
    await sleep(200);
  }
  return lowest;
}

/** Spawn to first answer; `check` decides whether an answer counts. */
async function timedStart(dataDir: string, agent: http.Agent, path: (apiUrl: string) => Promise<boolean>): Promise<{ seconds: number; rss: number; started: Started }> {
  const t = performance.now();
  const started = await spawnService(dataDir);
  while (!(await path(started.apiUrl))) await sleep(5);
  const seconds = (performance.now() - t) / 1000;
  return { seconds, rss: await idleRss(started.child.pid!), started };
}

export async function benchRestart(): Promise<BenchResult> {
  const events = Number(process.env.BENCH_EVENTS ?? DEFAULT_EVENTS);
  if (!Number.isInteger(events) || events <= 0) throw new Error(`BENCH_EVENTS must be a positive integer, got ${process.env.BENCH_EVENTS}`);
  const given = process.env.BENCH_DATA_DIR;
  const filledDir = given ?? mkdtempSync(join(tmpdir(), 'bench-restart-filled-'));
  const emptyDir = mkdtempSync(join(tmpdir(), 'bench-restart-empty-'));
  const agent = new http.Agent({ keepAlive: false });
  const lines: string[] = [];
  try {
    let filled: FilledLog | undefined = filledBefore(filledDir, events);
    if (filled) lines.push(`data folder ${filledDir}, filled before: ${filled.events.toLocaleString('en-US')} events (${filled.samples.toLocaleString('en-US')} samples)`);
    else {
      const tty = process.stderr.isTTY;
      const done = await fillLog(filledDir, events, (line, last) => process.stderr.write(tty ? `\r${line}${last ? '\n' : ''}` : last || /0 s,/.test(line) ? `${line}\n` : ''));
      filled = done;
      lines.push(
        `filled ${filledDir} with ${done.events.toLocaleString('en-US')} events (${done.samples.toLocaleString('en-US')} small signed samples through the ingestion command path) in ${done.seconds.toFixed(1)} s: ${Math.round(done.events / done.seconds).toLocaleString('en-US')} events/s`,
      );
    }
    const { projectId, apiKey, samples } = filled;
    const projectShowsAll = async (apiUrl: string) => {
      const reply = await request(agent, new URL(`/v1/api/${projectId}`, apiUrl), 'GET', { 'x-api-key': apiKey }).catch(() => undefined);
      if (reply?.status !== 200) return false;
      const count = (JSON.parse(reply.text) as { dataSummary?: { dataCount?: number } }).dataSummary?.dataCount;
      // A read store that answers while it catches up shows fewer for a while; more would be wrong.
      if (count !== undefined && count > samples) throw new Error(`GET /v1/api/${projectId} shows ${count} samples, not ${samples}`);
      return count === samples;
    };
    const healthy = async (apiUrl: string) => (await request(agent, new URL('/health', apiUrl), 'GET', {}).catch(() => undefined))?.status === 200;

    // The first start applies the log to the read models; what it reports names the read store.
    const first = await timedStart(filledDir, agent, projectShowsAll);
    const store = `read store "${String(first.started.line.readStore)}", event store "${String(first.started.line.eventStore)}"`;
    await stopService(first.started);
    lines.unshift(`service: node --import tsx main.ts in a process of its own; ${store} (from its start line; READ_STORE/MONGO_URL as set for this bench)`);
    lines.push(`first start after the fill (applies the whole log): ${first.seconds.toFixed(2)} s to the first complete answer, ${Math.round(filled.events / first.seconds).toLocaleString('en-US')} events/s`);

    const restarts: { seconds: number; rss: number }[] = [];
    const empties: { seconds: number; rss: number }[] = [];
    const rounds = filled.events > LARGE_LOG ? 1 : ROUNDS;
    for (let round = 0; round < rounds; round++) {
      const empty = await timedStart(emptyDir, agent, healthy);
      await stopService(empty.started);
      empties.push(empty);
      const again = await timedStart(filledDir, agent, projectShowsAll);
      await stopService(again.started);
      restarts.push(again);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const restart = median(restarts.map((r) => r.seconds));
    const emptyStart = median(empties.map((r) => r.seconds));
    const overMb = (median(restarts.map((r) => r.rss)) - median(empties.map((r) => r.rss))) / 1e6;
    const replay = restart > emptyStart ? filled.events / (restart - emptyStart) : Number.POSITIVE_INFINITY;
    lines.push(
      `restart with ${filled.events.toLocaleString('en-US')} events: ${restart.toFixed(2)} s to GET /v1/api/${projectId} showing all ${samples.toLocaleString('en-US')} samples, empty start ${emptyStart.toFixed(2)} s to GET /health: ` +
        `${(restart / emptyStart).toFixed(2)}x (aim: within ${AIM_RESTART}x); medians of ${rounds} alternating rounds (${restarts.map((r) => r.seconds.toFixed(2)).join(', ')} vs ${empties.map((r) => r.seconds.toFixed(2)).join(', ')} s)`,
      `memory once started and idle (VmRSS, lowest of ${RSS_READINGS} readings after ${IDLE_MS} ms): ${mb(median(restarts.map((r) => r.rss)))} vs empty ${mb(median(empties.map((r) => r.rss)))}: ` +
        `${overMb >= 0 ? '+' : ''}${overMb.toFixed(0)} MB (aim: within +${AIM_MEMORY_MB} MB)`,
      `replay at start, (events) / (restart - empty start): ${Number.isFinite(replay) ? `${Math.round(replay).toLocaleString('en-US')} events/s` : 'no slower than an empty start'} (a rebuild only where every start replays the log, as on the memory store)`,
    );

    // `main.ts rebuild`, as `npm run rebuild` runs it.
    const t = performance.now();
    const rebuild = await spawnService(filledDir, ['rebuild']);
    const code = await rebuild.exited;
    const seconds = (performance.now() - t) / 1000;
    const ms = Number(rebuild.line.ms);
    if (code !== 0) lines.push(`rebuild: exited with ${code}`);
    else if (Number.isFinite(ms)) {
      const rate = filled.events / (ms / 1000);
      lines.push(
        `rebuild of every read model: ${filled.events.toLocaleString('en-US')} events in ${(ms / 1000).toFixed(2)} s (as it reports; ${seconds.toFixed(2)} s with the process's start): ` +
          `${Math.round(rate).toLocaleString('en-US')} events/s (aim: ${AIM_REBUILD.toLocaleString('en-US')})`,
      );
    } else lines.push(`rebuild: ${String(rebuild.line.msg)} (${seconds.toFixed(2)} s); the replay at start above is this store's rebuild`);
    return { name: `restart, memory and rebuild with ${filled.events.toLocaleString('en-US')} events (service in its own process)`, lines };
  } finally {
    agent.destroy();
    if (!given) {
      const { MONGO_URL: url, MONGO_DB: db } = serviceEnv(filledDir);
      if (url && db) {
        const client = await MongoClient.connect(url);
        try {
          for (const name of [db, `${db}_keys`, `${db}_blobs`]) await client.db(name).dropDatabase();
        } finally {
          await client.close();
        }
      }
    }
    if (!given) rmSync(filledDir, { recursive: true, force: true });
    rmSync(emptyDir, { recursive: true, force: true });
  }
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(0)} MB`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

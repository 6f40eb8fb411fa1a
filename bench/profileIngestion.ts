// `npx tsx bench/profileIngestion.ts [seconds] [folder]`: where the service's CPU goes under the
// small-sample load. Starts the service (every role, one process) under the V8 profiler, sends new
// signed samples on 32 connections (the ingestion figure's load, from a process of its own) for
// `seconds` (default 10) after a second of warm-up, stops it, and reads the main thread's profile:
// the time of each part of the path per sample, as a share of the busy time (start-up and idle left
// out). A sample of the profile counts for the first part, in the order below, that a frame of its
// stack belongs to. The profiles stay in `folder` (default: a new temporary one) for a closer look.
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ownerWithProject, request, JSON_HEADERS, expectOk } from './benchKit';
import { serviceEnv } from './fillLog';
import { startLoadGenerator } from './loadGenerator';
import { mainThreadCpuSeconds, SERVICE_NODE_FLAGS } from './serviceProcess';

const PARTS: readonly (readonly [string, RegExp])[] = [
  ['start-up', /modules\/(esm|cjs)|compileSourceTextModule|tsx\/dist|generateKeyPair|service\/composition/],
  ['idle', /^\(idle\)/],
  ['garbage collection', /^\(garbage collector\)/],
  ['read models: commits', /readstore\/sqlite\/commits|sqliteReadStore\.ts/],
  ['key and project lookups', /ingestion\/uploadTarget|apiKeyQueries|projectQueries/],
  ['projections', /projections\/|writeBuffer|stores\/readstore\//],
  ['sagas', /sagaRunner|commands\/sagas|rxjs/],
  ['reading the log (subscriptions)', /toStoredEvent|checkpointedSubscription|sealingEventStore|eventBatches|SqliteSubscription|pageAfter/],
  ['append (decider, chain, commit)', /sqliteLogAppends|sampleCommands|handleCommand|commandContext|idAllocator|appendToStream/],
  ['blob put', /blobstore\//],
  ['parse and checks', /domain\/sample\/formats|sampleParser|checkSample/],
  ['body and its SHA-256', /sha256Thread|receiveFile/],
  ['access log', /http\/accessLog|\/pino\/|sonic-boom/],
];
const REST = 'HTTP, Koa, middlewares, Node';

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** Microseconds of the profile by part. */
function byPart(profile: Profile): Map<string, number> {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const frame = new Map(profile.nodes.map((n) => [n.id, `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url}`]));
  const parts = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const stack: string[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(frame.get(at)!);
    const part = PARTS.find(([, pattern]) => stack.some((f) => pattern.test(f)))?.[0] ?? REST;
    parts.set(part, (parts.get(part) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return parts;
}

const seconds = Number(process.argv[2] ?? 10);
const folder = resolve(process.argv[3] ?? mkdtempSync(join(tmpdir(), 'profile-ingestion-')));
const dataDir = mkdtempSync(join(tmpdir(), 'profile-ingestion-data-'));
const root = resolve(import.meta.dirname, '..');
const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${folder}`, ...SERVICE_NODE_FLAGS, '--import', 'tsx', 'main.ts'], {
  cwd: root,
  env: { ...process.env, ...serviceEnv(dataDir), LOG_LEVEL: 'info' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const exited = new Promise((done) => child.once('exit', done));
const started = await new Promise<Record<string, unknown>>((done, fail) => {
  child.once('exit', (code) => fail(new Error(`the service exited with ${code} before it started`)));
  createInterface({ input: child.stdout! }).on('line', (text) => {
    try {
      const line = JSON.parse(text) as Record<string, unknown>;
      // The main thread's line: a thread of roles (THREAD_ROLES) says it started too, with a `thread` field.
      if (line.msg === 'service started' && line.thread === undefined) done(line);
    } catch {
      // Not a log line.
    }
  });
});
const agent = new http.Agent({ keepAlive: true });
const api = String(started.apiUrl);
const { token, projectId, apiKey } = await ownerWithProject(agent, api, 'profile', 'Profile');
const { hmacKey } = JSON.parse(expectOk(await request(agent, new URL(`/v1/api/${projectId}/devkeys`, api), 'GET', { ...JSON_HEADERS, 'x-jwt-token': token }), 'devkeys')) as { hmacKey: string };
const load = await startLoadGenerator([{ name: 'data', kind: 'data', url: `${String(started.ingestionUrl)}/api/training/data`, apiKey, hmacKey }], 32);
let samples = 0;
// The profile counts a wait in a system call on the main thread (the WAL's sync) as busy time; the
// thread's CPU from /proc does not: the two side by side say how much of the busy time is waiting.
const cpuBefore = mainThreadCpuSeconds(child.pid!);
let cpuUsed = 0;
try {
  samples += (await load.round('data', 1000)).ops;
  for (let i = 0; i < seconds; i++) {
    const round = await load.round('data', 1000);
    if (round.failures > 0) throw new Error(round.firstFailure);
    samples += round.ops;
  }
  cpuUsed = mainThreadCpuSeconds(child.pid!) - cpuBefore;
} finally {
  await load.stop();
  agent.destroy();
  child.kill('SIGTERM');
  await exited;
}
// The main thread's profile is the first one the process wrote (workers' come after it).
const main = readdirSync(folder).filter((f) => f.endsWith('.cpuprofile')).sort()[0];
if (!main) throw new Error(`no profile in ${folder}`);
const parts = byPart(JSON.parse(readFileSync(join(folder, main), 'utf8')) as Profile);
const busy = [...parts].filter(([part]) => part !== 'start-up' && part !== 'idle').reduce((sum, [, us]) => sum + us, 0);
console.log(`${samples.toLocaleString('en-US')} samples in ${seconds + 1} s; main thread busy ${(busy / 1000).toFixed(0)} ms (${Math.round(busy / samples)} us a sample, profiler's own cost included); profiles in ${folder}`);
console.log(
  `main thread's CPU (user + system, /proc): ${Math.round((cpuUsed * 1e6) / samples)} us a sample; busy time that is not CPU is the thread waiting in system calls (the WAL's syncs), which the shares below count in their part`,
);
for (const [part, us] of [...parts].sort((a, b) => b[1] - a[1])) {
  if (part === 'start-up' || part === 'idle') continue;
  console.log(`  ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${String(Math.round(us / samples)).padStart(4)} us  ${part}`);
}

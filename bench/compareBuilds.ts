// `npx tsx bench/compareBuilds.ts <folder A> <folder B>`: two builds of the service (two checkouts,
// e.g. git worktrees sharing node_modules) under the same small-sample load, in rounds that take
// turns, so a drift of the machine's speed (on a shared host, the same code's CPU per sample drifts
// by half within minutes) falls on both alike. Each build runs as processes of its own on a data
// folder of its own: LAYOUT=default every role in one process as the build's default places them,
// LAYOUT=one every role on one thread of one process (THREAD_ROLES=none: builds from 2026-11-28 on),
// LAYOUT=apart the projections role in a second process, LAYOUT=thread every role in one process with
// the projections, sagas and jobs on a thread of their own; LAYOUT_A and LAYOUT_B set one build each
// (the same folder twice compares layouts). ROUNDS (default 12) rounds of ROUND_MS (1000) each. Prints each build's rate, p99 and
// CPU per sample (its processes, from /proc), and the per-round ratio B/A: its median and range.
// A comparison of a build with itself gives the noise to read a result against.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ownerWithProject, request, JSON_HEADERS, expectOk, quantiles } from './benchKit';
import { startLoadGenerator, type LoadTarget } from './loadGenerator';
import { processCpuSeconds, spawnServiceIn, stopService, type Started } from './serviceProcess';

const [folderA, folderB] = process.argv.slice(2).map((f) => resolve(f));
if (!folderA || !folderB) throw new Error('usage: npx tsx bench/compareBuilds.ts <folder A> <folder B>');
const ROUNDS = Number(process.env.ROUNDS ?? 12);
const ROUND_MS = Number(process.env.ROUND_MS ?? 1000);
const CONNECTIONS = 32;
const SERVING = 'api,ingestion,sagas,jobs,remote';

interface Build {
  name: 'A' | 'B';
  processes: Started[];
  dataDir: string;
}

async function startBuild(name: 'A' | 'B', root: string, layout: string): Promise<Build> {
  const dataDir = mkdtempSync(join(tmpdir(), `compare-${name}-`));
  const processes: Started[] = [];
  if (layout === 'apart') processes.push(await spawnServiceIn(root, dataDir, { ROLES: 'projections' }));
  const threads: Record<string, string> = layout === 'thread' ? { THREAD_ROLES: 'projections,sagas,jobs' } : layout === 'one' ? { THREAD_ROLES: 'none' } : {};
  processes.push(await spawnServiceIn(root, dataDir, { ROLES: layout === 'apart' ? SERVING : `${SERVING},projections`, ...threads }));
  return { name, processes, dataDir };
}

const cpuOf = (build: Build): number => build.processes.reduce((sum, p) => sum + processCpuSeconds(p.child.pid!), 0);

const layout = process.env.LAYOUT ?? 'default';
const builds = [await startBuild('A', folderA, process.env.LAYOUT_A ?? layout), await startBuild('B', folderB, process.env.LAYOUT_B ?? layout)];
const agent = new http.Agent({ keepAlive: true });
let load: Awaited<ReturnType<typeof startLoadGenerator>> | undefined;
try {
  const targets: LoadTarget[] = [];
  for (const build of builds) {
    const serving = build.processes.at(-1)!;
    const api = serving.apiUrl;
    const { token, projectId, apiKey } = await ownerWithProject(agent, api, `compare${build.name.toLowerCase()}`, `Compare ${build.name}`);
    const keys = JSON.parse(expectOk(await request(agent, new URL(`/v1/api/${projectId}/devkeys`, api), 'GET', { ...JSON_HEADERS, 'x-jwt-token': token }), 'devkeys')) as { hmacKey: string };
    targets.push({ name: build.name, kind: 'data', url: `${String(serving.line.ingestionUrl)}/api/training/data`, apiKey, hmacKey: keys.hmacKey });
  }
  load = await startLoadGenerator(targets, CONNECTIONS);
  for (const build of builds) await load.round(build.name, ROUND_MS);
  const totals = new Map(builds.map((b) => [b.name, { ops: 0, seconds: 0, cpu: 0, latencies: [] as number[] }]));
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const rates = new Map<string, number>();
    // The first to go alternates, so neither always follows the other.
    for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
      const before = cpuOf(build);
      const result = await load.round(build.name, ROUND_MS);
      if (result.failures > 0) throw new Error(`build ${build.name}: ${result.failures} failed calls, the first: ${result.firstFailure}`);
      const total = totals.get(build.name)!;
      total.ops += result.ops;
      total.seconds += result.seconds;
      total.cpu += cpuOf(build) - before;
      total.latencies.push(...result.latencies);
      rates.set(build.name, result.ops / result.seconds);
    }
    ratios.push(rates.get('B')! / rates.get('A')!);
  }
  for (const build of builds) {
    const t = totals.get(build.name)!;
    const [p99] = quantiles(t.latencies, [0.99]);
    console.log(`${build.name} (${build.name === 'A' ? folderA : folderB}): ${Math.round(t.ops / t.seconds)}/s, p99 ${p99!.toFixed(1)} ms, ${Math.round((t.cpu / t.ops) * 1e6)} us CPU per sample`);
  }
  const [low, median, high] = quantiles(ratios, [0, 0.5, 1]);
  console.log(`B/A per round: median ${median!.toFixed(3)}, range ${low!.toFixed(3)}-${high!.toFixed(3)} (${ROUNDS} rounds of ${ROUND_MS} ms each)`);
} finally {
  await load?.stop();
  agent.destroy();
  for (const build of builds) {
    for (const p of [...build.processes].reverse()) await stopService(p);
    rmSync(build.dataDir, { recursive: true, force: true });
  }
}

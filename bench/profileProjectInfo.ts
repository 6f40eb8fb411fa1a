// `npx tsx bench/profileProjectInfo.ts [ms] [folder] [JWT,bare Koa,...]`: where a project-information call's CPU goes.
// The bench's project (bench/projectInfo.ts), its load generator in a child process, and the V8
// profiler of this process (node:inspector) running only while one contender is loaded, so setup,
// warm-up and the other contenders stay out of each profile. Prints, per contender, the CPU per call
// and the microseconds per call of the functions that take the most (self time) and of the stages
// named below (inclusive time, each counted once per stack); writes the profiles to `folder` (to open
// in Chrome's DevTools) when given.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session, type Profiler } from 'node:inspector/promises';
import { join } from 'node:path';
import { closeServer, startBenchService } from './benchKit';
import { startLoadGenerator } from './loadGenerator';
import { projectInfoContenders, realisticProject } from './projectInfo';

const CONNECTIONS = 32;
const ms = Number(process.argv[2] ?? 3000);
const folder = process.argv[3] || undefined;
/** Which contenders to profile (names separated by a comma without a space: some hold ", "), all by default. */
const only = process.argv[4]?.split(/,(?=\S)/);
/** Microseconds between samples: finer sees more and costs the process more. */
const SAMPLING_US = Number(process.env.PROFILE_SAMPLING_US ?? 250);

/** Stages of our own code by function name and file, counted inclusively (once per stack). */
const STAGES: { name: string; fn: RegExp; url: RegExp }[] = [
  { name: 'authenticate (JWT verify, user lookup)', fn: /^authenticate$/, url: /principal\.ts/ },
  { name: '  JWT verify', fn: /^verify$/, url: /tokens\.ts/ },
  { name: '  session user', fn: /^sessionUser$/, url: /principal\.ts/ },
  { name: 'project access check', fn: /^requireProject$/, url: /principal\.ts/ },
  { name: 'kept answers (memo get/set)', fn: /^(get|set)$/, url: /readModelMemo\.ts/ },
  { name: 'handler (read models, view)', fn: /^handler$/, url: /projectRoutes\.ts/ },
  { name: 'operation wrapper (all of the above and more)', fn: /.*/, url: /api\/http\/operation\.ts/ },
];

/** Where a frame's code lives: a package, one of our files, or a part of Node. */
function moduleOf(url: string): string | undefined {
  if (url === '') return undefined;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `package ${pkg[1]}`;
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, 'node ').replace(/\/.*$/, '').replace(/^node _?/, 'node ');
  return url.replace(/^file:\/\/.*?\/projectinfo\//, '');
}

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

function summarize(profile: Profiler.Profile, calls: number): string[] {
  const nodes = new Map<number, Node>(profile.nodes.map((n) => [n.id, n as Node]));
  const parent = new Map<number, number>();
  for (const n of nodes.values()) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + (deltas[i] ?? 0));
  const frameName = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*node_modules\//, '~/').replace(/^file:\/\/.*?\/projectinfo\//, '')}:${n.callFrame.lineNumber + 1}`;
  // Self time by function.
  const byFunction = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const name = frameName(nodes.get(id)!);
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  }
  // Inclusive time by stage: a sample counts once for a stage however often the stage is on its stack.
  const byStage = new Map<string, number>();
  // Self time by the innermost frame that has code of its own (natives count for their caller).
  const byModule = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    let module: string | undefined;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = nodes.get(at)!;
      module ??= moduleOf(n.callFrame.url);
      for (const stage of STAGES) {
        if (seen.has(stage.name) || !stage.fn.test(n.callFrame.functionName) || !stage.url.test(n.callFrame.url)) continue;
        seen.add(stage.name);
        byStage.set(stage.name, (byStage.get(stage.name) ?? 0) + us);
      }
    }
    const key = module ?? nodes.get(id)!.callFrame.functionName;
    byModule.set(key, (byModule.get(key) ?? 0) + us);
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const idle = [...selfUs].filter(([id]) => /^\((idle|program)\)$/.test(nodes.get(id)!.callFrame.functionName)).reduce((a, [, us]) => a + us, 0);
  const perCall = (us: number) => (us / calls).toFixed(1).padStart(7);
  return [
    `  sampled ${(total / 1000).toFixed(0)} ms, of which idle/program ${(idle / 1000).toFixed(0)} ms; per call (${calls} calls), us:`,
    '  stages (inclusive):',
    ...STAGES.map((s) => `    ${perCall(byStage.get(s.name) ?? 0)}  ${s.name}`),
    '  self time by module (natives count for their caller), top 25:',
    ...[...byModule]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25)
      .map(([name, us]) => `    ${perCall(us)}  ${name}`),
    '  functions (self), top 30:',
    ...[...byFunction]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 30)
      .map(([name, us]) => `    ${perCall(us)}  ${name}`),
  ];
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
const started = await startBenchService('projectinfo-profile');
let bare: http.Server | undefined;
let load: Awaited<ReturnType<typeof startLoadGenerator>> | undefined;
const session = new Session();
try {
  const api = started.service.apiUrl!;
  const ceiling = await projectInfoContenders(api, await realisticProject(agent, started.service));
  bare = ceiling.bare;
  const contenders = ceiling.contenders.filter((c) => !only || only.includes(c.name));
  load = await startLoadGenerator(contenders.map((c) => ({ kind: 'get' as const, ...c })), CONNECTIONS);
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_US });
  for (const c of contenders) await load.round(c.name, 1000);
  for (const c of contenders) {
    await load.round(c.name, 300);
    await session.post('Profiler.start');
    const round = await load.round(c.name, ms);
    const { profile } = await session.post('Profiler.stop');
    console.log(`${c.name}: ${(round.ops / round.seconds).toFixed(0)}/s, CPU per call ${((round.hostCpuSeconds * 1e6) / round.ops).toFixed(0)} us`);
    for (const line of summarize(profile, round.ops)) console.log(line);
    if (folder) writeFileSync(join(folder, `${c.name.replace(/\W+/g, '-')}.cpuprofile`), JSON.stringify(profile));
  }
} finally {
  session.disconnect();
  await load?.stop();
  agent.destroy();
  await closeServer(bare);
  await started.stop();
}

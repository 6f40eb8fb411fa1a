// The service as the image runs it (Dockerfile; see test/e2e/compiledService.e2e.spec.ts): built by
// service/build.ts into a temp folder beside only the production node_modules, then `node dist/main.js`
// on an embedded data folder, ports chosen by the system. Plus a project on it with wave samples, and
// its jobs followed over HTTP, for the e2e tests that train and build on compiled code.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'vitest';
import { buildService, type ServiceBuild } from '../../service/build';
import { linkProductionModules } from './productionNodeModules';
import { classifierBlock, motionInputBlock, spectralBlock } from './projectWithFeatures';
import { killAll } from './serviceProcess';
import { SERVICE_NODE_FLAGS } from '../../bench/serviceProcess';
import { call, loginToken, signup } from './testService';
import { uploadWaveSamples } from './waveSamples';

const ROOT = path.resolve(__dirname, '../..');

export interface CompiledService {
  /** The temp folder: app/ (dist and node_modules) and data/; the test's afterAll removes it. */
  folder: string;
  app: string;
  build: ServiceBuild;
  /** The production packages linked into app/node_modules. */
  production: string[];
  child: ChildProcess;
  apiUrl: string;
  ingestionUrl: string;
  /** The environment of the test's own process, less what would load tsx or point at other stores. */
  env(): NodeJS.ProcessEnv;
  /** The node arguments that run dist/main.js with `args`. */
  node(args: string[]): string[];
}

/** Builds and starts the compiled service in a new temp folder named `prefix…`; its process is pushed to `children`. */
export async function startCompiledService(prefix: string, children: ChildProcess[]): Promise<CompiledService> {
  const folder = await mkdtemp(path.join(os.tmpdir(), prefix));
  try {
    const app = path.join(folder, 'app');
    const build = await buildService(path.join(app, 'dist'));
    const production = await linkProductionModules(ROOT, app);
    const env = (): NodeJS.ProcessEnv => ({
      ...process.env,
      NODE_OPTIONS: '',
      DATA_DIR: path.join(folder, 'data'), API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', MONGO_URL: '', EVENTSTORE_URL: '', ROLES: '',
    });
    // As the image's CMD runs it (Dockerfile).
    const node = (args: string[]) => ['--preserve-symlinks', ...SERVICE_NODE_FLAGS, 'dist/main.js', ...args];
    const child = spawn(process.execPath, node([]), { cwd: app, env: env(), stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const urls = await new Promise<{ apiUrl: string; ingestionUrl: string }>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        try {
          const entry = JSON.parse(line) as { msg?: string; apiUrl?: string; ingestionUrl?: string };
          if (entry.msg === 'service started') resolve({ apiUrl: entry.apiUrl!, ingestionUrl: entry.ingestionUrl! });
        } catch {
          // not a log line
        }
      });
      child.once('exit', (code, signal) => reject(new Error(`the compiled service exited with ${code ?? signal} before it started`)));
    });
    return { folder, app, build, production, child, ...urls, env, node };
  } catch (error) {
    // The caller never learns the folder: leave nothing behind.
    await killAll(children);
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}

/** Kills what is left of `children` and removes the service's folder. */
export async function stopCompiledService(service: CompiledService | undefined, children: ChildProcess[]): Promise<void> {
  await killAll(children);
  if (service) await rm(service.folder, { recursive: true, force: true });
}

/** A keras classifier on spectral features of accX/accY at 100 Hz, windows of `windowSizeMs` every 500 ms. */
export const compiledImpulse = (windowSizeMs: number) => ({
  name: 'Motion',
  inputBlocks: [{ ...motionInputBlock, windowSizeMs, windowIncreaseMs: 500 }],
  dspBlocks: [spectralBlock],
  learnBlocks: [classifierBlock],
});

type Service = { apiUrl: string; ingestionUrl: string };
type Project = { id: number; headers: Record<string, string> };

/** Waits for the job to end, expects it to have succeeded (its log as the message); its log. */
export async function finishedJob(service: Service, project: Project, jobId: number): Promise<string> {
  const status = async () => (await call(service, 'GET', `/api/${project.id}/jobs/${jobId}/status`, { headers: project.headers })).body.job as Record<string, unknown>;
  await expect.poll(async () => typeof (await status()).finishedSuccessful, { timeout: 90_000, interval: 200 }).toBe('boolean');
  const stdout = ((await call(service, 'GET', `/api/${project.id}/jobs/${jobId}/stdout?limit=10000`, { headers: project.headers })).body.stdout as { data: string }[]).map((l) => l.data).join('');
  expect((await status()).finishedSuccessful, stdout).toBe(true);
  return stdout;
}

/** POSTs `p` until the read models the request checks have caught up with the last job (a 400 meanwhile); the job's id. */
export async function startedJob(service: Service, project: Project, p: string, body: unknown): Promise<number> {
  let res = await call(service, 'POST', `/api/${project.id}${p}`, { headers: project.headers, body });
  for (let i = 0; i < 50 && res.status === 400; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    res = await call(service, 'POST', `/api/${project.id}${p}`, { headers: project.headers, body });
  }
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return Number(res.body.id);
}

export interface CompiledProject extends Project {
  apiKey: string;
  /** finishedJob for this project. */
  finish(jobId: number): Promise<string>;
  /** startedJob, then finishedJob: the job's log. */
  runJob(p: string, body: unknown): Promise<string>;
}

/** Signs ada up, creates `projectName` with `impulse` and uploads `samples` wave samples of `rows` rows. */
export async function compiledProject(service: Service, options: { projectName: string; impulse: object; samples: number; rows: number }): Promise<CompiledProject> {
  await call(service, 'POST', '/api-user-create', { body: signup() });
  const headers = { 'x-jwt-token': await loginToken(service, 'ada') };
  const created = await call(service, 'POST', '/api/projects/create', { headers, body: { projectName: options.projectName } });
  const project = { id: Number(created.body.id), apiKey: String(created.body.apiKey), headers };
  expect((await call(service, 'POST', `/api/${project.id}/impulse`, { headers, body: options.impulse })).status).toBe(200);
  await uploadWaveSamples(service, project, options.samples, options.rows);
  const finish = (jobId: number) => finishedJob(service, project, jobId);
  return { ...project, finish, runJob: async (p, body) => finish(await startedJob(service, project, p, body)) };
}

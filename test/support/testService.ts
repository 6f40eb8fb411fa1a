import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe } from 'vitest';
import { dropMongoDatabases, mongoSkipReason } from './mongoTestDatabases';
import { loadConfig, startService, type Config, type RunningService, type StartOptions } from '../../main';
import { allProjections } from '../../projections';
import { compareWithRebuild, type ReadModelComparison } from '../../projections/readModelCheck';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import type { Position } from '../../stores/eventstore/eventStore';
import type { Projection } from '../../projections/projection';
import { setTimeout as sleep } from 'node:timers/promises';
import { signup } from './signup';

export { signup };

export const TEST_PAYMENT_SECRET = 'test-payment-secret-0123456789';

/** The two setups the slice runs on: the embedded default, and MongoDB when MONGO_URL is set. */
export const setups: { name: string; mongo: boolean; skipReason?: string }[] = [
  { name: 'embedded (SQLite log and read models)', mongo: false },
  { name: 'MongoDB read and blob stores', mongo: true, ...(mongoSkipReason ? { skipReason: mongoSkipReason } : {}) },
];

export interface TestService extends RunningService {
  apiUrl: string;
  /** Stops the service, keeping the data (for restart tests). */
  stop(): Promise<void>;
  /** Starts it again on the same data. */
  restart(): Promise<TestService>;
  /**
   * Stops it and removes its data, after checking that the read models equal a rebuild from the
   * log: every test's traffic doubles as a check that projections are deterministic.
   */
  destroy(): Promise<void>;
  /** The live read models against a rebuild from the log, once the projections caught up. */
  checkReadModels(): Promise<ReadModelComparison>;
}

/**
 * Compares once the projections have caught up; a difference seen while the log was still moving
 * (a saga appending) is looked at again before it counts.
 */
async function checkReadModels(running: RunningService): Promise<ReadModelComparison> {
  const { events, readStore } = running.stores;
  let comparison: ReadModelComparison | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const head = await events.headPosition();
    if (head !== undefined && running.projections) await running.projections.waitFor(head, 10_000);
    // A failed projection may have written part of the event it failed on: leave out its lane.
    const failed = new Set((await running.projections?.failures())?.map((f) => f.projection) ?? []);
    const failedWrites = new Set(allProjections.filter((p) => failed.has(p.name)).flatMap((p) => [...p.writes]));
    const healthy = allProjections.filter((p) => ![...p.writes].some((c) => failedWrites.has(c)));
    // The comparison replays up to the stored checkpoints, which may trail what was applied a moment.
    if (head !== undefined) await storedCheckpointsReach(running, healthy, head);
    comparison = await compareWithRebuild(events, readStore, healthy, new MemoryReadStore());
    if (comparison.differing === 0 || (await events.headPosition()) === head) return comparison;
  }
  return comparison!;
}

async function storedCheckpointsReach(running: RunningService, projections: readonly Projection[], head: Position): Promise<void> {
  for (let waited = 0; waited < 3000; waited += 20) {
    const stored = await Promise.all(projections.map((p) => running.stores.readStore.getCheckpoint(p.checkpoint)));
    if (stored.every((position) => position !== undefined && position >= head)) return;
    await sleep(20);
  }
}

/**
 * The configuration of a second service on a test service's data folder (split roles, a process
 * beside it): any free ports, on 127.0.0.1, quiet unless `extra` says otherwise.
 */
export function besideEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return { DATA_DIR: dataDir, API_PORT: '0', INGESTION_PORT: '0', INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...extra };
}

export async function startTestService(options: {
  mongo: boolean;
  env?: Record<string, string>;
  /** The jobs role's runners; production's unless given (withTestJobRunners adds the test ones). */
  jobRunners?: StartOptions['jobRunners'];
  /** The remote-management server's timeouts and bounds (shortened by its tests). */
  remoteLimits?: StartOptions['remoteLimits'];
}): Promise<TestService> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-test-'));
  const mongoDb = `t_${randomBytes(6).toString('hex')}`;
  const config: Config = loadConfig({
    API_PORT: '0',
    INGESTION_PORT: '0',
    INGESTION_TLS_PORT: '0', REMOTE_MGMT_PORT: '0',
    HOST: '127.0.0.1',
    PUBLIC_URL: 'http://studio.test',
    PAYMENT_PORTAL_URL: 'https://pay.test/checkout',
    PAYMENT_WEBHOOK_SECRET: TEST_PAYMENT_SECRET,
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // One thread unless a test names its layout: the helpers drive the projections and sagas directly.
    THREAD_ROLES: 'none',
    ...(options.mongo ? { MONGO_URL: process.env.MONGO_URL!, MONGO_DB: mongoDb } : {}),
    ...options.env,
  });
  const launch = async (): Promise<TestService> => {
    const running = await startService(config, pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }), { jobRunners: options.jobRunners, remoteLimits: options.remoteLimits });
    let stopped = false;
    const service: TestService = {
      ...running,
      apiUrl: running.apiUrl!,
      stop: () => {
        stopped = true;
        return running.stop();
      },
      restart: async () => {
        await running.stop();
        return launch();
      },
      checkReadModels: () => checkReadModels(running),
      destroy: async () => {
        // Only where this process ran the projections over a read store it alone fills.
        const check = running.projections && !stopped && !options.env?.ROLES ? await checkReadModels(running) : undefined;
        await running.stop();
        if (options.mongo) await dropMongoDatabases([mongoDb, `${mongoDb}_keys`, `${mongoDb}_blobs`]);
        await rm(dataDir, { recursive: true, force: true });
        if (check && check.differing > 0) {
          throw new Error(`The read models differ from a rebuild from the log in ${check.differing} documents; the first: ${JSON.stringify(check.differences.slice(0, 3), null, 1)}`);
        }
      },
    };
    return service;
  };
  return launch();
}

/** A JSON call to the management API, for what the SDK cannot send (malformed bodies, odd headers). */
export async function call(
  service: { apiUrl: string },
  method: string,
  pathname: string,
  options: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${service.apiUrl}/v1${pathname}`, {
    method,
    headers: { 'content-type': 'application/json', ...options.headers },
    ...(options.rawBody !== undefined ? { body: options.rawBody } : options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { unparsed: text };
  }
  return { status: response.status, body, headers: response.headers };
}

/** A JWT for a user signed up with the test password. */
export async function loginToken(service: { apiUrl: string }, username: string): Promise<string> {
  const res = await call(service, 'POST', '/api-login', { body: { username, password: 'correct horse battery' } });
  if (res.status !== 200) throw new Error(`login of ${username} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return String(res.body.token);
}

/** Signs a user up (e-mail `<username>@example.com`, the test password) and logs them in. */
export async function registerUser(service: { apiUrl: string }, username = 'ada', overrides: Record<string, unknown> = {}): Promise<{ id: number; token: string }> {
  const res = await call(service, 'POST', '/api-user-create', { body: signup({ username, email: `${username}@example.com`, ...overrides }) });
  if (res.status !== 200) throw new Error(`sign-up of ${username} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { id: Number(res.body.id), token: await loginToken(service, username) };
}


/** A describe block for one setup; a skipped setup says why in its title. */
export function describeOn(setup: (typeof setups)[number], title: string, body: () => void): void {
  const suite = setup.skipReason ? describe.skip : describe;
  suite(`${title} on ${setup.name}${setup.skipReason ? ` (skipped: ${setup.skipReason})` : ''}`, body);
}

/** A stored blob's bytes, read whole: for the small results tests look into. */
export async function blobBytes(service: { stores: { blobs: { open(sha256: string): Promise<AsyncIterable<unknown>> } } }, sha256: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await service.stores.blobs.open(sha256)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Signs Ada up and makes her a project: her JWT header, the project's id and its API key. */
export async function adaWithProject(service: { apiUrl: string }, projectName: string): Promise<{ ada: Record<string, string>; projectId: number; apiKey: string }> {
  await call(service, 'POST', '/api-user-create', { body: signup() });
  const ada = { 'x-jwt-token': await loginToken(service, 'ada') };
  const project = await call(service, 'POST', '/api/projects/create', { headers: ada, body: { projectName } });
  if (project.status !== 200) throw new Error(`creating project ${projectName} answered ${project.status}: ${JSON.stringify(project.body)}`);
  return { ada, projectId: Number(project.body.id), apiKey: String(project.body.apiKey) };
}


/** Signs Ada and Bob up (the sign-ups unchecked, as a test that only needs the two users wants) and logs both in: their ids and JWTs. */
export async function adaAndBob(service: { apiUrl: string }): Promise<{ adaId: number; bobId: number; ada: string; bob: string }> {
  const adaId = Number((await call(service, 'POST', '/api-user-create', { body: signup() })).body.id);
  const bobId = Number((await call(service, 'POST', '/api-user-create', { body: signup({ name: 'Bob', username: 'bob', email: 'bob@example.com' }) })).body.id);
  return { adaId, bobId, ada: await loginToken(service, 'ada'), bob: await loginToken(service, 'bob') };
}

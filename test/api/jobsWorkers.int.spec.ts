// Workers sharing one log: exactly one runs each job, and a job whose worker went silent is
// retried once and then failed with the reason. On the SQLite event store, each worker with its own
// connection to the file, as separate processes would have.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runJobCommand } from '../../commands/jobs/jobCommands';
import type { JobRunner } from '../../commands/jobs/jobRunners';
import { JobWorker, type JobLookout } from '../../commands/jobs/jobWorker';
import { ThreadPool } from '../../commands/jobs/threadPool';
import { jobDecider } from '../../domain/job/jobDecider';
import { jobStream, type JobEvent } from '../../domain/job/jobEvents';
import { fold } from '../../domain/shared/decider';
import { WrongExpectedRevisionError, type EventStore, type StoredEvent } from '../../stores/eventstore/eventStore';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';

const log = pino({ level: 'silent' });
const ctx = () => ({ actor: 'user:1', correlationId: 'test', now: new Date() });

describe('job workers sharing a SQLite log', () => {
  let dir: string;
  let stores: SqliteEventStore[];
  let pool: ThreadPool;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-workers-'));
    stores = [];
    pool = new ThreadPool(1);
  });
  afterEach(async () => {
    await pool.close();
    for (const s of stores) await s.close();
    await rm(dir, { recursive: true, force: true });
  });
  const open = () => {
    const s = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    stores.push(s);
    return s;
  };

  async function requestTestJob(store: SqliteEventStore, jobId: number, categoryKey = 'count'): Promise<StoredEvent> {
    await runJobCommand(
      store,
      { type: 'RequestJob', data: { jobId, projectId: 1, organizationId: null, category: 'Test', categoryKey, key: '', parameters: {}, jobNotificationUids: [], createdByUserId: 1, now: new Date() } },
      ctx(),
    );
    return (await store.readStream(jobStream(jobId)))[0]!;
  }

  const history = async (store: SqliteEventStore, jobId: number) => (await store.readStream(jobStream(jobId))) as unknown as (JobEvent & StoredEvent)[];
  const stateOf = async (store: SqliteEventStore, jobId: number) => fold(jobDecider, await history(store, jobId));

  async function until(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(20);
    }
  }

  it('lets exactly one of two workers claim and run each job, racing on the same event', async () => {
    const runs = new Map<number, string[]>();
    const runnerOf = (name: string): JobRunner => async ({ jobId, log: write }) => {
      runs.set(jobId, [...(runs.get(jobId) ?? []), name]);
      write(`run by ${name}`);
    };
    const none: JobLookout = { waiting: async () => [], running: async () => [] };
    // Counts the appends the store refused for a stale revision: the claims the revision check decided.
    let conflicts = 0;
    const counting = (store: SqliteEventStore): EventStore =>
      Object.assign(Object.create(store) as EventStore, {
        appendToStream: (...args: Parameters<EventStore['appendToStream']>) =>
          store.appendToStream(...args).catch((error: unknown) => {
            if (error instanceof WrongExpectedRevisionError) conflicts += 1;
            throw error;
          }),
      });
    const a = new JobWorker({ events: counting(open()), jobs: none, runners: new Map([['count', runnerOf('a')]]), pool, log, workerId: 'a' });
    const b = new JobWorker({ events: counting(open()), jobs: none, runners: new Map([['count', runnerOf('b')]]), pool, log, workerId: 'b' });
    const writer = open();
    const jobIds = Array.from({ length: 20 }, (_, i) => i + 1);
    for (const jobId of jobIds) {
      const requested = await requestTestJob(writer, jobId);
      // Both workers see the request at the same moment, as their subscriptions would deliver it.
      const [first, second] = jobId % 2 === 0 ? [a, b] : [b, a];
      await Promise.all([first.saga().react(requested), second.saga().react(requested)]);
    }
    await until(async () => (await Promise.all(jobIds.map((id) => stateOf(writer, id)))).every((s) => s.status === 'finished'), 'every job to finish');
    for (const jobId of jobIds) {
      expect(runs.get(jobId), `job ${jobId}`).toHaveLength(1);
      const events = await history(writer, jobId);
      const claims = events.filter((e) => e.type === 'JobStarted');
      expect(claims, `job ${jobId}`).toHaveLength(1);
      const winner = (claims[0]!.data as { workerId: string }).workerId;
      expect(runs.get(jobId)).toEqual([winner]);
      expect(events.filter((e) => e.type === 'JobFinished').map((e) => e.data)).toEqual([expect.objectContaining({ finishedSuccessful: true })]);
    }
    // Both won some: the race was real, not one worker always first; and the store's revision check
    // refused the loser's claim at least once (rather than the loser reading the claim in time).
    expect(new Set([...runs.values()].flat()).size).toBe(2);
    expect(conflicts).toBeGreaterThan(0);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('retries a job once when its worker goes silent, and fails a silent job with no attempts left, with the reason', async () => {
    const events = open();
    // The first worker claims the job and hangs without heartbeats (its rounds never run): as if killed.
    const hang: JobRunner = ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
    const lookout = (store: SqliteEventStore, ids: number[]): JobLookout => ({
      waiting: async () => [],
      running: async () => {
        const out = [];
        for (const id of ids) {
          const s = fold(jobDecider, (await store.readStream(jobStream(id))) as unknown as JobEvent[]);
          if (s.status === 'started') out.push({ id, categoryKey: s.categoryKey, lastSignOfLife: new Date(s.lastSignOfLifeMs).toISOString() });
        }
        return out;
      },
    });
    const lost = new JobWorker({ events, jobs: lookout(events, [1]), runners: new Map([['count', hang]]), pool, log, workerId: 'lost' });
    await lost.saga().react(await requestTestJob(events, 1));
    expect((await stateOf(events, 1)).status).toBe('started');

    // A second worker, also hanging on its run, takes over after the lease: attempt 2.
    const second = new JobWorker({ events: open(), jobs: lookout(events, [1]), runners: new Map([['count', hang]]), pool, log, workerId: 'second', heartbeatMs: 100, leaseMs: 400 });
    second.start();
    await until(async () => {
      const s = await stateOf(events, 1);
      return s.status === 'started' && s.attempt === 2;
    }, 'the retry');
    const retried = await history(events, 1);
    expect(retried.filter((e) => e.type === 'JobStarted').map((e) => e.data)).toEqual([
      expect.objectContaining({ workerId: 'lost', attempt: 1 }),
      expect.objectContaining({ workerId: 'second', attempt: 2 }),
    ]);
    expect(retried.find((e) => e.type === 'JobOutputWritten')?.data).toMatchObject({ lines: [{ logLevel: 'warn', data: expect.stringMatching(/^Worker lost stopped responding: no sign of life for \d+ s \(attempt 1 of 2\); retrying\n$/) }] });
    // The heartbeats of the second worker keep the job its own while it is alive.
    await sleep(1000);
    expect(await stateOf(events, 1)).toMatchObject({ status: 'started', attempt: 2, workerId: 'second' });
    expect((await history(events, 1)).some((e) => e.type === 'JobHeartbeat')).toBe(true);

    // The second worker dies too (its rounds stop; its run hangs): a third ends the job as failed.
    await second.stop().catch(() => undefined);
    const s2 = await stateOf(events, 1);
    // stop() ends its own runs as failed; a killed process could not, so test the silent case on a fresh job.
    expect(s2.status).toBe('finished');

    const third = new JobWorker({ events: open(), jobs: lookout(events, [2]), runners: new Map([['count', hang]]), pool, log, workerId: 'third', heartbeatMs: 100, leaseMs: 400, maxAttempts: 1 });
    await new JobWorker({ events, jobs: lookout(events, []), runners: new Map([['count', hang]]), pool, log, workerId: 'lost2' }).saga().react(await requestTestJob(events, 2));
    third.start();
    await until(async () => (await stateOf(events, 2)).status === 'finished', 'the failure');
    const end = (await history(events, 2)).find((e) => e.type === 'JobFinished')!.data;
    expect(end).toMatchObject({ finishedSuccessful: false, cancelled: false, reason: expect.stringMatching(/^Worker lost2 stopped responding: no sign of life for \d+ s \(attempt 1 of 1\)$/) });
    await third.stop();
    await lost.stop();
  });

  it('does not claim a job it has no runner for', async () => {
    const events = open();
    const worker = new JobWorker({ events, jobs: { waiting: async () => [], running: async () => [] }, runners: new Map(), pool, log, workerId: 'idle' });
    await worker.saga().react(await requestTestJob(events, 5, 'unknown-kind'));
    expect((await stateOf(events, 5)).status).toBe('requested');
  });
});

import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineProjection, type Projection } from '../../projections/projection';
import { CheckpointPoller, ProjectionRunner } from '../../projections/projectionRunner';
import { StoredProjectionStatus } from '../../projections/projectionStatus';
import type { NewEvent, StoredEvent } from '../../stores/eventstore/eventStore';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import type { ReadStore } from '../../stores/readstore/readStore';

const silent = pino({ level: 'silent' });
const counted = (n: number): NewEvent => ({
  id: randomUUID(),
  type: 'Counted',
  data: { n },
  metadata: { actor: 'system:test', correlationId: 'c', time: new Date().toISOString() },
});

/**
 * Records the `n` of every event it applies, in `collection`. `fails(n, attempt)` decides whether
 * its handler throws on an event (attempt counts from 1 per event).
 */
function recording(name: string, fails: (n: number, attempt: number) => boolean = () => false, collection = `seen-${name}`) {
  const seen: number[] = [];
  const attempts = new Map<number, number[]>();
  const projection: Projection = defineProjection(name, [collection], {
    async Counted(e: StoredEvent, store: ReadStore) {
      const n = Number(e.data.n);
      const times = attempts.get(n) ?? [];
      times.push(Date.now());
      attempts.set(n, times);
      if (fails(n, times.length)) throw new Error(`handler fault on ${n}`);
      seen.push(n);
      await store.collection(collection).updateOne({ _id: `${name}:${n}` }, { $set: { n } }, { upsert: true });
    },
  } as never);
  return { projection, seen, attempts };
}

/** Log lines as objects, to count what was said loudly. */
function capturingLog() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

describe('a projection that fails on an event', () => {
  const runners: ProjectionRunner[] = [];
  afterEach(async () => {
    for (const r of runners.splice(0)) await r.stop();
  });
  const run = (runner: ProjectionRunner) => {
    runners.push(runner);
    return runner;
  };

  it('lets the others apply every event, lets start() resolve, and is reported with the event', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('c-1', [counted(1)], 'no_stream');
    const poison = await events.appendToStream('c-1', [counted(2)], 0n);
    await events.appendToStream('c-1', [counted(3)], 1n);
    const store = new MemoryReadStore();
    const good = recording('good');
    const bad = recording('bad', (n) => n === 2);
    const runner = run(new ProjectionRunner(events, store, [bad.projection, good.projection], silent, 10, 40));
    await runner.start();

    expect(good.seen).toEqual([1, 2, 3]);
    expect(bad.seen).toEqual([1]);
    const failures = await runner.failures();
    expect(failures).toEqual([
      expect.objectContaining({ projection: 'bad', position: poison.position.toString(), eventType: 'Counted', streamId: 'c-1', error: 'handler fault on 2' }),
    ]);
    // The failed projection's checkpoint never passes the event it failed on.
    expect(await store.getCheckpoint('bad')).toBe(poison.position - 1n);
  });

  it('does not hold up read-your-writes waits for later events', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('c-1', [counted(1), counted(2)], 'no_stream');
    const good = recording('good');
    const runner = run(new ProjectionRunner(events, new MemoryReadStore(), [recording('bad', (n) => n === 2).projection, good.projection], silent, 10, 40));
    await runner.start();
    const { position } = await events.appendToStream('c-1', [counted(3)], 1n);
    const started = Date.now();
    expect(await runner.waitFor(position, 5000)).toBe(true);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(good.seen).toEqual([1, 2, 3]);
    expect(runner.appliedPosition).toBe(position);
  });

  it('resumes at the event it failed on once its handler works again, skipping nothing, then follows the live log', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('c-1', [counted(1), counted(2), counted(3)], 'no_stream');
    const store = new MemoryReadStore();
    // A transient fault: the third attempt on event 2 succeeds.
    const healing = recording('healing', (n, attempt) => n === 2 && attempt <= 2);
    const runner = run(new ProjectionRunner(events, store, [healing.projection, recording('other').projection], silent, 10, 40));
    await runner.start();
    await vi.waitFor(async () => expect(await runner.failures()).toEqual([]), { timeout: 5000, interval: 10 });
    expect(healing.attempts.get(2)).toHaveLength(3);
    expect(healing.seen).toEqual([1, 2, 3]);

    const { position } = await events.appendToStream('c-1', [counted(4)], 2n);
    expect(await runner.waitFor(position, 5000)).toBe(true);
    expect(healing.seen).toEqual([1, 2, 3, 4]);
    await vi.waitFor(async () => expect(await store.getCheckpoint('healing')).toBe(position), { timeout: 5000, interval: 10 });
    expect(await new StoredProjectionStatus(store).failures()).toEqual([]);
  });

  it('is retried with a delay that doubles up to the ceiling', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('c-1', [counted(1)], 'no_stream');
    const stuck = recording('stuck', () => true);
    const runner = run(new ProjectionRunner(events, new MemoryReadStore(), [stuck.projection], silent, 40, 160));
    await runner.start();
    await vi.waitFor(() => expect(stuck.attempts.get(1)?.length).toBeGreaterThanOrEqual(6), { timeout: 5000, interval: 10 });
    const times = stuck.attempts.get(1)!;
    const gaps = times.slice(1, 6).map((t, i) => t - times[i]!);
    // Timers fire no earlier than asked (a few ms of clock granularity aside); later is possible on a busy machine.
    [40, 80, 160, 160, 160].forEach((delay, i) => expect(gaps[i]).toBeGreaterThanOrEqual(delay - 5));
    const [failure] = await runner.failures();
    expect(failure?.attempts).toBeGreaterThanOrEqual(6);
    expect(failure?.nextAttempt).not.toBeNull();
  });

  it('refuses two projections that write the same collection: each collection has one writer', () => {
    const events = SqliteEventStore.open(':memory:');
    const a = recording('a', () => false, 'shared');
    const b = recording('b', () => false, 'shared');
    expect(() => new ProjectionRunner(events, new MemoryReadStore(), [a.projection, b.projection], silent)).toThrow(/Projections a and b both write shared/);
  });

  it('holds back no other projection, whatever the order they are listed in, and catches up alone once fixed', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('c-1', [counted(1), counted(2), counted(3)], 'no_stream');
    let fixed = false;
    const before = recording('before');
    const failing = recording('failing', (n) => n === 2 && !fixed);
    const after = recording('after');
    const runner = run(new ProjectionRunner(events, new MemoryReadStore(), [before.projection, failing.projection, after.projection], silent, 10, 40));
    await runner.start();
    expect(before.seen).toEqual([1, 2, 3]);
    expect(after.seen).toEqual([1, 2, 3]);
    expect(failing.seen).toEqual([1]);
    expect((await runner.failures()).map((f) => f.projection)).toEqual(['failing']);
    fixed = true;
    await vi.waitFor(() => expect(failing.seen).toEqual([1, 2, 3]), { timeout: 5000, interval: 10 });
    const { position } = await events.appendToStream('c-1', [counted(4)], 2n);
    expect(await runner.waitFor(position, 5000)).toBe(true);
    expect([before.seen, failing.seen, after.seen]).toEqual([[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]]);
    expect(await runner.failures()).toEqual([]);
  });

  it('is stored for processes without the projections role, whose waits leave it out too, and cleared once past', async () => {
    const events = SqliteEventStore.open(':memory:');
    const store = new MemoryReadStore();
    await events.appendToStream('c-1', [counted(1), counted(2)], 'no_stream');
    let fixed = false;
    const runner = run(new ProjectionRunner(events, store, [recording('bad', (n) => n === 2 && !fixed).projection, recording('good').projection], silent, 10, 40));
    await runner.start();
    const status = new StoredProjectionStatus(store);
    await vi.waitFor(async () => expect((await status.failures()).map((f) => f.projection)).toEqual(['bad']), { timeout: 5000, interval: 10 });

    const { position } = await events.appendToStream('c-1', [counted(3)], 1n);
    const started = Date.now();
    expect(await new CheckpointPoller(store, ['bad', 'good']).waitFor(position, 5000)).toBe(true);
    expect(Date.now() - started).toBeLessThan(1000);

    fixed = true;
    await vi.waitFor(async () => expect(await status.failures()).toEqual([]), { timeout: 5000, interval: 10 });
    expect(await new CheckpointPoller(store, ['bad', 'good']).waitFor(position, 2000)).toBe(true);
  });

  it('is logged once at error level, not at every retry', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('c-1', [counted(1)], 'no_stream');
    const stuck = recording('stuck', () => true);
    const { log, lines } = capturingLog();
    const runner = run(new ProjectionRunner(events, new MemoryReadStore(), [stuck.projection], log, 5, 5));
    await runner.start();
    await vi.waitFor(() => expect(stuck.attempts.get(1)?.length).toBeGreaterThanOrEqual(5), { timeout: 5000, interval: 10 });
    const errors = lines.filter((l) => Number(l.level) >= 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ projection: 'stuck', position: '1', eventType: 'Counted', streamId: 'c-1' });
    expect(String(errors[0]?.msg)).toContain('stuck');
  });

  it('stays reported after a restart until the projection gets past that event', async () => {
    const events = SqliteEventStore.open(':memory:');
    const store = new MemoryReadStore();
    await events.appendToStream('c-1', [counted(1), counted(2)], 'no_stream');
    const first = new ProjectionRunner(events, store, [recording('bad', (n) => n === 2).projection], silent, 10, 40);
    await first.start();
    await vi.waitFor(async () => expect(await new StoredProjectionStatus(store).failures()).toHaveLength(1), { timeout: 5000, interval: 10 });
    await first.stop();
    const [stored] = await new StoredProjectionStatus(store).failures();
    expect(stored).toMatchObject({ projection: 'bad', position: '2', nextAttempt: null });

    const stillBroken = new ProjectionRunner(events, store, [recording('bad', (n) => n === 2).projection], silent, 10, 40);
    await stillBroken.start();
    expect((await stillBroken.failures()).map((f) => f.position)).toEqual(['2']);
    await stillBroken.stop();

    const fixedVersion = recording('bad');
    const fixedRunner = run(new ProjectionRunner(events, store, [fixedVersion.projection], silent, 10, 40));
    await fixedRunner.start();
    expect(fixedVersion.seen).toEqual([2]);
    await vi.waitFor(async () => expect(await new StoredProjectionStatus(store).failures()).toEqual([]), { timeout: 5000, interval: 10 });
  });

  it('in a batch, commits what came before the failing event and none of the failing handler\'s own writes', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('c-1', [counted(1), counted(2), counted(3)], 'no_stream');
    const store = new MemoryReadStore();
    // Writes, then throws on 2: its write for 2 must not be stored with the batch.
    const halfway = defineProjection('halfway', ['halfway'], {
      async Counted(e: StoredEvent, s: ReadStore) {
        await s.collection('halfway').updateOne({ _id: `n${String(e.data.n)}` }, { $set: { n: e.data.n } }, { upsert: true });
        await s.collection('halfway').updateOne({ _id: 'total' }, { $inc: { sum: Number(e.data.n) } }, { upsert: true });
        if (e.data.n === 2) throw new Error('fault after writing');
      },
    } as never);
    const runner = run(new ProjectionRunner(events, store, [halfway], silent, 60_000));
    await runner.start();
    expect((await runner.failures()).map((f) => [f.projection, f.position])).toEqual([['halfway', '2']]);
    expect(await store.collection('halfway').find({}, { sort: { _id: 1 } })).toEqual([{ _id: 'n1', n: 1 }, { _id: 'total', sum: 1 }]);
    expect(await store.getCheckpoint('halfway')).toBe(1n);
  });

  it('lets the runner stop promptly while it waits to retry', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('c-1', [counted(1)], 'no_stream');
    const runner = new ProjectionRunner(events, new MemoryReadStore(), [recording('stuck', () => true).projection], silent, 60_000);
    await runner.start();
    expect(await runner.failures()).toHaveLength(1);
    const started = Date.now();
    await runner.stop();
    expect(Date.now() - started).toBeLessThan(500);
  });
});

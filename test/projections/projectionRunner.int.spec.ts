import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { allProjections } from '../../projections';
import { defineProjection, type Projection } from '../../projections/projection';
import { CheckpointPoller, ProjectionRunner } from '../../projections/projectionRunner';
import type { NewEvent, StoredEvent } from '../../stores/eventstore/eventStore';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import type { ReadStore } from '../../stores/readstore/readStore';
import { SqliteReadStore } from '../../stores/readstore/sqliteReadStore';
import { call, describeOn, setups, signup, startTestService, type TestService } from '../support/testService';
import { snapshot } from '../support/sampleLog';

const log = pino({ level: 'silent' });
const event = (type: string, n: number): NewEvent => ({
  id: randomUUID(),
  type,
  data: { n },
  metadata: { actor: 'system:test', correlationId: 'c', time: new Date().toISOString() },
});

/** Counts what it sees in a read model of its own (`collection`, when it shares one). */
function counting(name: string, seen: number[], failFirst = 0, collection = `counted-${name}`): Projection {
  let failures = failFirst;
  return defineProjection(name, [collection], {
    async Counted(e: StoredEvent, store: ReadStore) {
      if (failures > 0) {
        failures--;
        throw new Error('handler fault');
      }
      seen.push(Number(e.data.n));
      await store.collection(collection).updateOne({ _id: name }, { $inc: { total: 1 } }, { upsert: true });
    },
  } as never);
}

describe('the projection runner', () => {
  const runners: ProjectionRunner[] = [];
  afterEach(async () => {
    for (const r of runners.splice(0)) await r.stop();
  });

  it('catches up at start, then applies new events live, and answers read-your-writes waits', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('c-1', [event('Counted', 1), event('Other', 0)], 'no_stream');
    const seen: number[] = [];
    const runner = new ProjectionRunner(events, new MemoryReadStore(), [counting('p', seen)], log);
    runners.push(runner);
    await runner.start();
    expect(seen).toEqual([1]);
    const { position } = await events.appendToStream('c-1', [event('Counted', 2)], 1n);
    expect(await runner.waitFor(position, 2000)).toBe(true);
    expect(seen).toEqual([1, 2]);
    expect(await runner.waitFor(position + 100n, 50)).toBe(false);
  });

  it('into an empty SQLite store, catches up with the indexes deferred and ends with them built', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('c-1', [event('Counted', 1), event('Counted', 2)], 'no_stream');
    const store = SqliteReadStore.open(':memory:', { indexes: { 'counted-p': [{ keys: { total: 1 } }] } });
    const deferred = vi.spyOn(store, 'deferIndexesWhileEmpty');
    const built = vi.spyOn(store, 'buildDeferredIndexes');
    const runner = new ProjectionRunner(events, store, [counting('p', [])], log);
    runners.push(runner);
    await runner.start();
    expect(deferred).toHaveReturnedWith(true);
    expect(built).toHaveBeenCalledTimes(1);
    expect(await store.collection('counted-p').findOne({ _id: 'p' })).toEqual({ _id: 'p', total: 2 });
    expect(store.explainFind('counted-p', { total: 2 }).plan.join(' ')).toMatch(/USING INDEX/);
    // A later start finds checkpoints: nothing is deferred again.
    await runner.stop();
    const again = new ProjectionRunner(events, store, [counting('p', [])], log);
    runners.push(again);
    await again.start();
    expect(deferred).toHaveLastReturnedWith(false);
  });

  it('stopped before it caught up, leaves the indexes deferred for the next start to build at its end', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('c-1', [event('Counted', 1), event('Counted', 2)], 'no_stream');
    const store = SqliteReadStore.open(':memory:', { indexes: { 'counted-p': [{ keys: { total: 1 } }] } });
    const built = vi.spyOn(store, 'buildDeferredIndexes');
    let entered = false;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const blocking = defineProjection('p', ['counted-p'], {
      async Counted(_e: StoredEvent, s: ReadStore) {
        entered = true;
        await held;
        await s.collection('counted-p').updateOne({ _id: 'p' }, { $inc: { total: 1 } }, { upsert: true });
      },
    } as never);
    const first = new ProjectionRunner(events, store, [blocking], log, undefined, undefined, { batchSize: 1 });
    const starting = first.start();
    await vi.waitFor(() => expect(entered).toBe(true));
    const stopping = first.stop();
    release();
    await stopping;
    await starting;
    expect(built).not.toHaveBeenCalled();
    const second = new ProjectionRunner(events, store, [counting('p', [])], log);
    runners.push(second);
    await second.start();
    expect(built).toHaveBeenCalledTimes(1);
    expect(await store.collection('counted-p').findOne({ _id: 'p' })).toEqual({ _id: 'p', total: 2 });
  });

  it('resumes from its stored checkpoints without applying an event twice', async () => {
    const events = SqliteEventStore.open(':memory:');
    const store = new MemoryReadStore();
    await events.appendToStream('c-1', [event('Counted', 1), event('Counted', 2)], 'no_stream');
    const first: number[] = [];
    const r1 = new ProjectionRunner(events, store, [counting('p', first)], log);
    await r1.start();
    await r1.stop();
    await events.appendToStream('c-1', [event('Counted', 3)], 1n);
    const second: number[] = [];
    const r2 = new ProjectionRunner(events, store, [counting('p', second)], log);
    runners.push(r2);
    await r2.start();
    expect(first).toEqual([1, 2]);
    expect(second).toEqual([3]);
    expect(await store.getCheckpoint('p')).toBe(3n);
  });

  it('counts as caught up when it resumes at the head of the log and nothing new comes', async () => {
    const events = SqliteEventStore.open(':memory:');
    const store = new MemoryReadStore();
    const { position } = await events.appendToStream('c-1', [event('Counted', 1)], 'no_stream');
    const r1 = new ProjectionRunner(events, store, [counting('p', [])], log);
    await r1.start();
    await r1.stop();
    const r2 = new ProjectionRunner(events, store, [counting('p', [])], log);
    runners.push(r2);
    await r2.start();
    expect(await r2.waitFor(position, 100)).toBe(true);
  });

  it('lets another process wait on the checkpoints it stores (split roles)', async () => {
    const events = SqliteEventStore.open(':memory:');
    const store = new MemoryReadStore();
    const runner = new ProjectionRunner(events, store, [counting('p', [])], log);
    runners.push(runner);
    await runner.start();
    const { position } = await events.appendToStream('c-1', [event('Counted', 1), event('Unhandled', 0)], 'no_stream');
    expect(await new CheckpointPoller(store, ['p']).waitFor(position, 2000)).toBe(true);
  });
});

for (const setup of setups) {
  describeOn(setup, 'a rebuild', () => {
    let service: TestService;
    afterEach(async () => {
      await service?.destroy();
    });

    it('drops the read models and replays the log into identical documents', async () => {
      service = await startTestService({ mongo: setup.mongo });
      await call(service, 'POST', '/api-user-create', { body: signup() });
      await call(service, 'POST', '/api-user-create', { body: signup({ username: 'bob', email: 'bob@example.com', projectName: 'B' }) });
      const token = String((await call(service, 'POST', '/api-login', { body: { username: 'bob', password: 'correct horse battery' } })).body.token);
      await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Second' } });
      const before = await snapshot(service.stores.readStore);
      expect(before.users).toHaveLength(2);
      expect(before.projects).toHaveLength(3);

      await service.projections!.stop();
      await service.stores.readStore.dropAll();
      expect((await snapshot(service.stores.readStore)).users).toEqual([]);
      const rebuild = new ProjectionRunner(service.stores.events, service.stores.readStore, allProjections, log);
      await rebuild.start();
      await rebuild.stop();
      expect(await snapshot(service.stores.readStore)).toEqual(before);
    });
  });
}

// Checkpoints carry the identity of the log they were taken in (stores/eventstore/checkpoint.ts):
// a read store filled from one log is refused by the runners of another, loudly, instead of
// resuming at a position that means nothing there.

import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SagaRunner, sagaCheckpointName, type Saga } from '../../commands/sagas/sagaRunner';
import { defineProjection, type Projection } from '../../projections/projection';
import { ProjectionRunner } from '../../projections/projectionRunner';
import { ForeignCheckpointError, loadCheckpoint, storeCheckpoint } from '../../processing/checkpoint';
import type { NewEvent, StoredEvent } from '../../stores/eventstore/eventStore';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import { MongoReadStore } from '../../stores/readstore/mongoReadStore';
import type { ReadStore } from '../../stores/readstore/readStore';

const event = (type: string, n: number): NewEvent => ({
  id: randomUUID(),
  type,
  data: { n },
  metadata: { actor: 'system:test', correlationId: 'c', time: new Date().toISOString() },
});

/** A logger whose error lines the test can read. */
function recordingLog(): { log: pino.Logger; errors: () => string[] } {
  const lines: string[] = [];
  const log = pino({ level: 'error' }, { write: (line: string) => void lines.push(line) });
  return { log, errors: () => lines };
}

function counting(seen: number[]): Projection {
  return defineProjection('counting', [], {
    async Counted(e: StoredEvent) {
      seen.push(Number(e.data.n));
    },
  } as never);
}

function recordingSaga(seen: number[]): Saga {
  return {
    name: 'recording',
    handles: new Set(['Counted']),
    async react(e) {
      seen.push(Number(e.data.n));
    },
  };
}

const mongoUrl = process.env.MONGO_URL;
const readStores: [string, () => Promise<ReadStore>, string | undefined][] = [
  ['MemoryReadStore', async () => new MemoryReadStore(), undefined],
  [
    'MongoReadStore',
    async () => MongoReadStore.connect(mongoUrl ?? '', `checkpoints_${randomUUID().slice(0, 8)}`),
    mongoUrl ? undefined : 'MONGO_URL is not set',
  ],
];

for (const [name, openReadStore, skipReason] of readStores) {
  const suite = skipReason === undefined ? describe : describe.skip;
  suite(`checkpoints with the identity of their log on ${name}${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
    const closing: { close(): Promise<void> }[] = [];
    const track = <T extends { close(): Promise<void> }>(item: T): T => {
      closing.push(item);
      return item;
    };
    afterEach(async () => {
      for (const item of closing.splice(0).reverse()) await item.close();
    });

    it('stores the identity with the position, takes a legacy checkpoint as this log\'s and tags it on the next write', async () => {
      const events = track(SqliteEventStore.open(':memory:'));
      const readStore = await openReadStore();
      track({ close: async () => (await readStore.dropAll(), readStore.close()) });
      expect(await loadCheckpoint(readStore, 'p', events)).toBeUndefined();

      await readStore.setCheckpoint('p', 7n); // as stored before identities
      expect(await loadCheckpoint(readStore, 'p', events)).toBe(7n);
      await storeCheckpoint(readStore, 'p', 9n, events);
      expect(await readStore.readCheckpoint('p')).toEqual({ position: 9n, store: await events.identity() });
      expect(await readStore.getCheckpoint('p')).toBe(9n);
    });

    it('refuses a checkpoint of another log, naming both', async () => {
      const [mine, other] = [track(SqliteEventStore.open(':memory:')), track(SqliteEventStore.open(':memory:'))];
      const readStore = await openReadStore();
      track({ close: async () => (await readStore.dropAll(), readStore.close()) });
      await storeCheckpoint(readStore, 'p', 3n, other);
      const error = await loadCheckpoint(readStore, 'p', mine).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ForeignCheckpointError);
      expect((error as Error).message).toContain(await other.identity());
      expect((error as Error).message).toContain(await mine.identity());
    });
  });
}

describe('the runners with checkpoints of another log', () => {
  const stopping: { stop(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const s of stopping.splice(0)) await s.stop();
  });

  /** A read store filled from log A, then an installation pointed at log B with that read store. */
  async function carriedOver(checkpointName: string): Promise<{ events: SqliteEventStore; readStore: MemoryReadStore }> {
    const before = SqliteEventStore.open(':memory:');
    const events = SqliteEventStore.open(':memory:');
    const readStore = new MemoryReadStore();
    await before.appendToStream('c-1', [event('Counted', 1), event('Counted', 2)], 'no_stream');
    await storeCheckpoint(readStore, checkpointName, (await before.headPosition())!, before);
    await before.close();
    await events.appendToStream('c-1', [event('Counted', 10), event('Counted', 20), event('Counted', 30)], 'no_stream');
    return { events, readStore };
  }

  it('a projection runner refuses to start, applies nothing and says why, loudly', async () => {
    const { events, readStore } = await carriedOver('counting');
    const { log, errors } = recordingLog();
    const seen: number[] = [];
    const runner = new ProjectionRunner(events, readStore, [counting(seen)], log, 10);
    stopping.push(runner);
    await expect(runner.start()).rejects.toBeInstanceOf(ForeignCheckpointError);
    await expect.poll(() => errors().some((line) => line.includes('FOREIGN_CHECKPOINT') || line.includes('ForeignCheckpointError'))).toBe(true);
    expect(seen).toEqual([]);
    expect(await readStore.getCheckpoint('counting')).toBe(2n);
  });

  it('a saga runner reacts to nothing and says why, loudly', async () => {
    const { events, readStore } = await carriedOver(sagaCheckpointName('recording'));
    const { log, errors } = recordingLog();
    const seen: number[] = [];
    const runner = new SagaRunner(events, readStore, recordingSaga(seen), log, 10);
    stopping.push(runner);
    runner.start();
    await expect.poll(() => errors().some((line) => line.includes('ForeignCheckpointError'))).toBe(true);
    expect(seen).toEqual([]);
  });

  it('resume from a checkpoint stored before identities and tag it with this log', async () => {
    const events = SqliteEventStore.open(':memory:');
    const readStore = new MemoryReadStore();
    const first = await events.appendToStream('c-1', [event('Counted', 1), event('Counted', 2)], 'no_stream');
    await readStore.setCheckpoint('counting', first.position);
    await readStore.setCheckpoint(sagaCheckpointName('recording'), first.position);
    await events.appendToStream('c-1', [event('Counted', 3)], 1n);

    const projected: number[] = [];
    const projections = new ProjectionRunner(events, readStore, [counting(projected)], pino({ level: 'silent' }));
    stopping.push(projections);
    await projections.start();
    const reacted: number[] = [];
    const saga = new SagaRunner(events, readStore, recordingSaga(reacted), pino({ level: 'silent' }));
    stopping.push(saga);
    saga.start();

    await expect.poll(() => reacted).toEqual([3]);
    expect(projected).toEqual([3]);
    const identity = await events.identity();
    await expect.poll(() => readStore.readCheckpoint('counting')).toEqual({ position: first.position + 1n, store: identity });
    await expect.poll(() => readStore.readCheckpoint(sagaCheckpointName('recording'))).toEqual({
      position: first.position + 1n,
      store: identity,
    });
  });
});

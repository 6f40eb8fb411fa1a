import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SagaRunner, type Saga } from '../../commands/sagas/sagaRunner';
import type { NewEvent, StoredEvent } from '../../stores/eventstore/eventStore';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';

const tick = (n: number): NewEvent => ({ id: randomUUID(), type: 'Tick', data: { n }, metadata: { actor: 'system:test', correlationId: 'c', time: new Date().toISOString() } });

/** Reacts to `Tick`s, recording when it tried each; `fails(n)` decides whether a reaction throws. */
function saga(name: string, fails: (n: number) => boolean = () => false) {
  const seen: number[] = [];
  const tries = new Map<number, number[]>();
  const s: Saga = {
    name,
    handles: new Set(['Tick']),
    async react(e: StoredEvent) {
      const n = Number(e.data.n);
      tries.set(n, [...(tries.get(n) ?? []), Date.now()]);
      if (fails(n)) throw new Error(`reaction to ${n} failed`);
      seen.push(n);
    },
  };
  return { saga: s, seen, tries };
}

describe('a saga that fails on an event', () => {
  const runners: SagaRunner[] = [];
  afterEach(async () => {
    for (const r of runners.splice(0)) await r.stop();
  });

  it('holds back no other saga, is retried with a growing delay and logged once, and resumes once its reaction works', async () => {
    const events = SqliteEventStore.open(':memory:');
    const readStore = new MemoryReadStore();
    await events.appendToStream('t-1', [tick(1), tick(2), tick(3)], 'no_stream');
    const lines: Record<string, unknown>[] = [];
    const log = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      }),
    );
    let fixed = false;
    const failing = saga('failing', (n) => n === 2 && !fixed);
    const healthy = saga('healthy');
    for (const s of [failing, healthy]) {
      const runner = new SagaRunner(events, readStore, s.saga, log, 30, 120);
      runners.push(runner);
      runner.start();
    }
    await vi.waitFor(() => expect(healthy.seen).toEqual([1, 2, 3]), { timeout: 5000, interval: 10 });
    await vi.waitFor(() => expect(failing.tries.get(2)?.length).toBeGreaterThanOrEqual(4), { timeout: 5000, interval: 10 });
    expect(failing.seen).toEqual([1]);
    const times = failing.tries.get(2)!;
    [30, 60, 120].forEach((delay, i) => expect(times[i + 1]! - times[i]!).toBeGreaterThanOrEqual(delay - 5));
    const errors = lines.filter((l) => Number(l.level) >= 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ saga: 'failing', position: '2', eventType: 'Tick', streamId: 't-1' });

    fixed = true;
    await vi.waitFor(() => expect(failing.seen).toEqual([1, 2, 3]), { timeout: 5000, interval: 10 });
    expect(failing.tries.get(1)).toHaveLength(1);
  });
});

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventBatches } from '../../processing/eventBatches';
import type { NewEvent, StoredEvent } from '../../stores/eventstore/eventStore';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';

const tick = (n: number): NewEvent => ({ id: randomUUID(), type: 'Tick', data: { n }, metadata: { actor: 'system:test', correlationId: 'c', time: new Date().toISOString() } });

describe('batches of a subscription', () => {
  it('take what the log holds, up to the maximum, then hand a live event on alone', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('t-1', Array.from({ length: 12 }, (_, i) => tick(i)), 'no_stream');
    const subscription = events.subscribeToAll();
    const batches = eventBatches(subscription, 5);
    const sizes: number[] = [];
    for (let i = 0; i < 3; i++) sizes.push((await batches.next()).value!.length);
    expect(sizes).toEqual([5, 5, 2]);
    const next = batches.next();
    await events.appendToStream('t-1', [tick(12)], 11n);
    const live: StoredEvent[] = (await next).value!;
    expect(live.map((e) => e.data.n)).toEqual([12]);
    await subscription.close();
    expect((await batches.next()).done).toBe(true);
    await events.close();
  });

  it('leave no timer behind per event while catching up without a turn passing', async () => {
    // A source that delivers on promises alone, as a catch-up over the SQLite log does.
    async function* source(): AsyncGenerator<StoredEvent> {
      for (let n = 0; n < 20_000; n++) yield { data: { n } } as unknown as StoredEvent;
    }
    const immediates = () => process.getActiveResourcesInfo().filter((r) => r === 'Immediate').length;
    const before = immediates();
    let events = 0;
    let most = 0;
    for await (const batch of eventBatches(source(), 100)) {
      events += batch.length;
      most = Math.max(most, immediates() - before);
    }
    expect(events).toBe(20_000);
    // One per open batch at most (it held every event it raced against until a turn passed).
    expect(most).toBeLessThanOrEqual(1);
  });

  it('let the event loop turn between full batches, so timers run during a catch-up that does no I/O', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('t-1', Array.from({ length: 20 }, (_, i) => tick(i)), 'no_stream');
    let turns = 0;
    let spinning: NodeJS.Immediate | undefined;
    const spin = (): void => {
      turns++;
      spinning = setImmediate(spin);
    };
    spinning = setImmediate(spin);
    const seen: number[] = [];
    try {
      for await (const _batch of eventBatches(events.readAll(), 5)) seen.push(turns);
    } finally {
      clearImmediate(spinning);
    }
    expect(seen).toHaveLength(4);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]!);
    await events.close();
  });

  it('keep log order and skip nothing across batches', async () => {
    const events = SqliteEventStore.open(':memory:');
    await events.appendToStream('t-1', Array.from({ length: 50 }, (_, i) => tick(i)), 'no_stream');
    const seen: number[] = [];
    for await (const batch of eventBatches(events.readAll(), 7)) seen.push(...batch.map((e) => Number(e.data.n)));
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => i));
    await events.close();
  });
});

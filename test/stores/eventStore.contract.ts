// The event store contract: every adapter runs these same tests. Streams get random names so the
// suite also runs against a shared server whose log is not empty; assertions look only at the
// test's own streams.

import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DuplicateEventIdError,
  WrongExpectedRevisionError,
  type EventMetadata,
  type EventPayload,
  type AppendResult,
  type EventStore,
  type NewEvent,
  type Position,
  type StoredEvent,
  type Subscription,
} from '../../stores/eventstore/eventStore';
import { chainHash, GENESIS_HASH } from '../../stores/eventstore/eventChain';

export interface ContractOptions {
  /** Opens the store the last open() gave once more (same data); absent where every open is a new log. */
  reopen?: () => Promise<EventStore>;
  /** How many events the long subscription consumes (each adapter picks what its setup can afford). */
  longLogEvents?: number;
}

export function eventStoreContract(
  name: string,
  open: () => Promise<EventStore>,
  skipReason?: string,
  options: ContractOptions = {},
): void {
  const suite = skipReason === undefined ? describe : describe.skip;
  const longLogEvents = options.longLogEvents ?? 20_000;
  const title = skipReason === undefined ? name : `${name} (skipped: ${skipReason})`;

  suite(title, () => {
    let store: EventStore;

    beforeEach(async () => {
      store = await open();
    });

    afterEach(async () => {
      await store.close();
    });

    describe('appending with an expected revision', () => {
      it('creates the stream when appending with no_stream', async () => {
        const stream = streamName();
        const result = await store.appendToStream(stream, [newEvent('Created')], 'no_stream');
        expect(result.nextExpectedRevision).toBe(0n);
        expect(await store.readStream(stream)).toHaveLength(1);
      });

      it('refuses a second no_stream append, reporting actual revision 0', async () => {
        const stream = streamName();
        await store.appendToStream(stream, [newEvent('Created')], 'no_stream');
        await expectConflict(store.appendToStream(stream, [newEvent('Created')], 'no_stream'), 0n);
        expect(await store.readStream(stream)).toHaveLength(1);
      });

      it('appends at the exact revision and refuses a stale one, reporting the actual revision', async () => {
        const stream = streamName();
        await store.appendToStream(stream, [newEvent('A'), newEvent('B')], 'no_stream');
        const next = await store.appendToStream(stream, [newEvent('C')], 1n);
        expect(next.nextExpectedRevision).toBe(2n);
        await expectConflict(store.appendToStream(stream, [newEvent('D')], 1n), 2n);
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['A', 'B', 'C']);
      });

      it('refuses an exact revision on a missing stream, reporting no_stream', async () => {
        await expectConflict(store.appendToStream(streamName(), [newEvent('A')], 0n), 'no_stream');
      });

      it('refuses stream_exists on a missing stream, reporting no_stream', async () => {
        const stream = streamName();
        await expectConflict(store.appendToStream(stream, [newEvent('A')], 'stream_exists'), 'no_stream');
        expect(await store.readStream(stream)).toEqual([]);
      });

      it('appends with stream_exists once the stream exists', async () => {
        const stream = streamName();
        await store.appendToStream(stream, [newEvent('A')], 'no_stream');
        const result = await store.appendToStream(stream, [newEvent('B')], 'stream_exists');
        expect(result.nextExpectedRevision).toBe(1n);
      });

      it('always appends with any', async () => {
        const stream = streamName();
        const first = await store.appendToStream(stream, [newEvent('A')], 'any');
        const second = await store.appendToStream(stream, [newEvent('B')], 'any');
        expect(first.nextExpectedRevision).toBe(0n);
        expect(second.nextExpectedRevision).toBe(1n);
        expect(second.position).toBeGreaterThan(first.position);
      });

      it('lets exactly one of two concurrent appends with the same expected revision win', async () => {
        const stream = streamName();
        await store.appendToStream(stream, [newEvent('A')], 'no_stream');
        const outcomes = await Promise.allSettled([
          store.appendToStream(stream, [newEvent('B1')], 0n),
          store.appendToStream(stream, [newEvent('B2')], 0n),
        ]);
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect(lost[0]?.reason).toBeInstanceOf(WrongExpectedRevisionError);
        expect((lost[0]?.reason as WrongExpectedRevisionError).actual).toBe(1n);
        expect(await store.readStream(stream)).toHaveLength(2);
      });

      it('fails only the conflicting one of many appends made at once, and stores the others whole', async () => {
        const streams = Array.from({ length: 20 }, () => streamName());
        await store.appendToStream(streams[7]!, [newEvent('A')], 'no_stream');
        const outcomes = await Promise.allSettled(streams.map((s) => store.appendToStream(s, [newEvent('X'), newEvent('Y')], 'no_stream')));
        outcomes.forEach((outcome, i) => expect(outcome.status).toBe(i === 7 ? 'rejected' : 'fulfilled'));
        expect((outcomes[7] as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevisionError);
        for (const [i, s] of streams.entries()) expect((await store.readStream(s)).map((e) => e.type)).toEqual(i === 7 ? ['A'] : ['X', 'Y']);
        const positions = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.position] : []));
        expect(new Set(positions).size).toBe(19);
      });

      it('stores none of the events of a batch that conflicts', async () => {
        const stream = streamName();
        await store.appendToStream(stream, [newEvent('A')], 'no_stream');
        await expectConflict(store.appendToStream(stream, [newEvent('B'), newEvent('C'), newEvent('D')], 5n), 0n);
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['A']);
      });

      it('gives a batch consecutive revisions and increasing positions, and returns the last', async () => {
        const stream = streamName();
        const result = await store.appendToStream(stream, [newEvent('A'), newEvent('B'), newEvent('C')], 'no_stream');
        const events = await store.readStream(stream);
        expect(events.map((e) => e.revision)).toEqual([0n, 1n, 2n]);
        expectIncreasing(events.map((e) => e.position));
        expect(result).toEqual({ nextExpectedRevision: 2n, position: events[2]?.position });
      });
    });

    describe('retrying an append', () => {
      it('stores an append retried with the same event ids once and answers with the same result', async () => {
        const stream = streamName();
        const batch = [newEvent('A'), newEvent('B')];
        const first = await store.appendToStream(stream, batch, 'no_stream');
        const retried = await store.appendToStream(stream, batch, 'no_stream');
        expect(retried).toEqual(first);
        expect(await store.readStream(stream)).toHaveLength(2);
      });

      it('stores a retried append at an exact revision once', async () => {
        const stream = streamName();
        await store.appendToStream(stream, [newEvent('A')], 'no_stream');
        const batch = [newEvent('B')];
        const first = await store.appendToStream(stream, batch, 0n);
        const retried = await store.appendToStream(stream, batch, 0n);
        expect(retried).toEqual(first);
        expect(await store.readStream(stream)).toHaveLength(2);
      });

      it('refuses a batch whose ids only partly match a stored append', async () => {
        const stream = streamName();
        const a = newEvent('A');
        await store.appendToStream(stream, [a, newEvent('B')], 'no_stream');
        await expect(store.appendToStream(stream, [a, newEvent('C')], 'no_stream')).rejects.toBeInstanceOf(DuplicateEventIdError);
        await expect(store.appendToStream(stream, [a, newEvent('C')], 1n)).rejects.toBeInstanceOf(DuplicateEventIdError);
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['A', 'B']);
      });

      /** A stream where batch [B, C] was appended at revision 0, then D after it: the saga's case. */
      async function retried(): Promise<{ stream: string; batch: NewEvent[]; first: AppendResult }> {
        const stream = streamName();
        await store.appendToStream(stream, [newEvent('A')], 'no_stream');
        const batch = [newEvent('B'), newEvent('C')];
        const first = await store.appendToStream(stream, batch, 0n);
        await store.appendToStream(stream, [newEvent('D')], 2n);
        return { stream, batch, first };
      }

      it("recognises a retry sent with the first attempt's revision after other events were appended", async () => {
        const { stream, batch, first } = await retried();
        expect(await store.appendToStream(stream, batch, 0n)).toEqual(first);
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['A', 'B', 'C', 'D']);
      });

      it('recognises a retry sent with a stale revision other than the first attempt\'s', async () => {
        const { stream, batch, first } = await retried();
        expect(await store.appendToStream(stream, batch, 1n)).toEqual(first);
        expect(await store.appendToStream(stream, batch, 'no_stream')).toEqual(first);
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['A', 'B', 'C', 'D']);
      });

      it("recognises a retry sent with the stream's current revision, any or stream_exists", async () => {
        const { stream, batch, first } = await retried();
        // The saga re-sent its command: the handler re-read the stream (now at 3) and decided again.
        expect(await store.appendToStream(stream, batch, 3n)).toEqual(first);
        expect(await store.appendToStream(stream, batch, 'any')).toEqual(first);
        expect(await store.appendToStream(stream, batch, 'stream_exists')).toEqual(first);
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['A', 'B', 'C', 'D']);
        expect(await store.headPosition()).toBeGreaterThanOrEqual(first.position);
      });

      it('recognises a retried creation after other events were appended', async () => {
        const stream = streamName();
        const batch = [newEvent('Created')];
        const first = await store.appendToStream(stream, batch, 'no_stream');
        await store.appendToStream(stream, [newEvent('Changed')], 0n);
        expect(await store.appendToStream(stream, batch, 'no_stream')).toEqual(first);
        expect(await store.appendToStream(stream, batch, 1n)).toEqual(first);
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['Created', 'Changed']);
      });

      it('refuses a batch whose later id is stored when the revision holds, and reports a conflict when it does not', async () => {
        const { stream, batch } = await retried();
        const reused = [newEvent('New'), batch[1]!];
        await expect(store.appendToStream(stream, reused, 3n)).rejects.toBeInstanceOf(DuplicateEventIdError);
        await expectConflict(store.appendToStream(stream, reused, 1n), 3n);
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['A', 'B', 'C', 'D']);
      });

      it('refuses ids repeated within one batch, storing nothing', async () => {
        const stream = streamName();
        const twice = newEvent('Twice');
        await expect(store.appendToStream(stream, [twice, newEvent('Other'), twice], 'no_stream')).rejects.toMatchObject({
          code: 'DUPLICATE_EVENT_ID',
          eventId: twice.id,
        });
        expect(await store.readStream(stream)).toEqual([]);
      });
    });

    describe('identity', () => {
      it('is a UUID that stays the same across calls', async () => {
        const identity = await store.identity();
        expect(identity).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(await store.identity()).toBe(identity);
      });

      it.skipIf(options.reopen === undefined)(
        'is the same when the same log is opened again (skipped where every open is a new log)',
        async () => {
          const again = await options.reopen!();
          try {
            expect(await again.identity()).toBe(await store.identity());
          } finally {
            await again.close();
          }
        },
      );

      it('is not an event of the log', async () => {
        const start = await store.headPosition();
        const stream = streamName();
        const appended = await store.appendToStream(stream, [newEvent('Only')], 'no_stream');
        expect(await store.headPosition()).toBe(appended.position);
        const events = await collect(store.readAll(afterOption(start)));
        expect(events.map((e) => e.streamId)).toEqual([stream]);
      });
    });

    describe('reading a stream', () => {
      it('gives an empty array for a missing stream', async () => {
        expect(await store.readStream(streamName())).toEqual([]);
      });

      it('reads from a given revision', async () => {
        const stream = streamName();
        await store.appendToStream(stream, ['A', 'B', 'C', 'D'].map((t) => newEvent(t)), 'no_stream');
        const events = await store.readStream(stream, { fromRevision: 2n });
        expect(events.map((e) => [e.type, e.revision])).toEqual([
          ['C', 2n],
          ['D', 3n],
        ]);
        expect(await store.readStream(stream, { fromRevision: 4n })).toEqual([]);
      });

      it('reads a page of at most maxCount events, the next one from the revision after it', async () => {
        const stream = streamName();
        await store.appendToStream(stream, ['A', 'B', 'C', 'D', 'E'].map((t) => newEvent(t)), 'no_stream');
        const pages: string[][] = [];
        for (let from = 0n; ; ) {
          const page = await store.readStream(stream, { fromRevision: from, maxCount: 2 });
          if (page.length === 0) break;
          expect(page.length).toBeLessThanOrEqual(2);
          pages.push(page.map((e) => e.type));
          from = page[page.length - 1]!.revision + 1n;
        }
        expect(pages).toEqual([['A', 'B'], ['C', 'D'], ['E']]);
        expect(await store.readStream(stream, { maxCount: 0 })).toEqual([]);
        expect(await store.readStream(streamName(), { maxCount: 3 })).toEqual([]);
      });

      it('round-trips metadata and nested data', async () => {
        const stream = streamName();
        const data = {
          v: 2,
          name: 'caf\u00e9 \u2713 \ud83d\ude80',
          nested: { list: [1, 'two', { three: true, none: null }], empty: {} },
          float: 0.1,
        };
        const metadata: EventMetadata = {
          actor: 'user:42',
          correlationId: randomUUID(),
          causationId: randomUUID(),
          time: '2024-05-06T07:08:09.123Z',
        };
        const event = newEvent('Nested', data, metadata);
        await store.appendToStream(stream, [event], 'no_stream');
        const [stored] = await store.readStream(stream);
        expect(stored).toMatchObject({ id: event.id, streamId: stream, type: 'Nested', revision: 0n, data, metadata });
        const bare = newEvent('Bare', {}, { actor: 'system:test', correlationId: 'c', time: metadata.time });
        await store.appendToStream(stream, [bare], 0n);
        const [, storedBare] = await store.readStream(stream);
        expect(storedBare?.metadata).toStrictEqual(bare.metadata);
      });
    });

    describe('reading the whole log', () => {
      it('reads from the start and after a position, in order, with strictly increasing positions', async () => {
        const start = await store.headPosition();
        const a = streamName();
        const b = streamName();
        await store.appendToStream(a, [newEvent('A0'), newEvent('A1')], 'no_stream');
        await store.appendToStream(b, [newEvent('B0')], 'no_stream');
        const middle = await store.appendToStream(a, [newEvent('A2')], 1n);
        await store.appendToStream(b, [newEvent('B1'), newEvent('B2')], 0n);

        const ours = (events: StoredEvent[]): StoredEvent[] => events.filter((e) => e.streamId === a || e.streamId === b);
        const fromStart = ours(await collect(store.readAll()));
        expect(fromStart.map((e) => e.type)).toEqual(['A0', 'A1', 'B0', 'A2', 'B1', 'B2']);
        expectIncreasing(fromStart.map((e) => e.position));

        const afterStart = await collect(store.readAll(start === undefined ? {} : { after: start }));
        expect(afterStart.map((e) => e.type)).toEqual(['A0', 'A1', 'B0', 'A2', 'B1', 'B2']);

        const afterMiddle = await collect(store.readAll({ after: middle.position }));
        expect(afterMiddle.map((e) => e.type)).toEqual(['B1', 'B2']);
        expect(afterMiddle.every((e) => e.position > middle.position)).toBe(true);
      });

      it('stops after maxCount events', async () => {
        const start = await store.headPosition();
        const stream = streamName();
        await store.appendToStream(stream, ['A', 'B', 'C', 'D', 'E'].map((t) => newEvent(t)), 'no_stream');
        const events = await collect(store.readAll({ ...afterOption(start), maxCount: 3 }));
        expect(events.map((e) => e.type)).toEqual(['A', 'B', 'C']);
        expect(await collect(store.readAll({ ...afterOption(start), maxCount: 0 }))).toEqual([]);
      });

      it('gives the position of the last appended event as the head', async () => {
        const result = await store.appendToStream(streamName(), [newEvent('A'), newEvent('B')], 'no_stream');
        expect(await store.headPosition()).toBe(result.position);
      });
    });

    describe('positions', () => {
      it('are bigints that order correctly beyond ten events', async () => {
        const stream = streamName();
        const positions: Position[] = [];
        for (let i = 0; i < 12; i++) {
          const result = await store.appendToStream(stream, [newEvent(`E${i}`)], i === 0 ? 'no_stream' : BigInt(i - 1));
          expect(typeof result.position).toBe('bigint');
          positions.push(result.position);
        }
        expectIncreasing(positions);
        const stored = await store.readStream(stream);
        expect(stored.map((e) => e.position)).toEqual(positions);
        expect(stored.every((e) => typeof e.position === 'bigint' && typeof e.revision === 'bigint')).toBe(true);
        // Sorting as strings would put "10" before "9"; bigints must not.
        expect([...positions].reverse().sort(compareBigints)).toEqual(positions);
      });
    });

    describe('subscribing to the whole log', () => {
      it('catches up from a position and then goes live, in order', async () => {
        const stream = streamName();
        const before = await store.appendToStream(stream, [newEvent('Old')], 'no_stream');
        const from = await store.appendToStream(stream, [newEvent('H1'), newEvent('H2')], 0n);
        await store.appendToStream(stream, [newEvent('H3')], 2n);
        const subscription = store.subscribeToAll({ after: before.position });
        const received = take(subscription, 6, (e) => e.streamId === stream);
        await sleep(100);
        await store.appendToStream(stream, [newEvent('L1')], 3n);
        await store.appendToStream(stream, [newEvent('L2'), newEvent('L3')], 4n);
        const events = await received;
        expect(events.map((e) => e.type)).toEqual(['H1', 'H2', 'H3', 'L1', 'L2', 'L3']);
        expectIncreasing(events.map((e) => e.position));
        expect(events[1]?.position).toBe(from.position);
      });

      it('goes live when subscribing from the start of an empty log', async () => {
        const stream = streamName();
        const subscription = store.subscribeToAll();
        const received = take(subscription, 2, (e) => e.streamId === stream);
        await sleep(100);
        await store.appendToStream(stream, [newEvent('First')], 'no_stream');
        await store.appendToStream(stream, [newEvent('Second')], 0n);
        expect((await received).map((e) => e.type)).toEqual(['First', 'Second']);
      });

      it('hands over only the types asked for, caught up and live, in order, passing the others by', async () => {
        const stream = streamName();
        const wanted = `Wanted${randomUUID().slice(0, 8)}`;
        const start = await store.appendToStream(stream, [newEvent('Before')], 'no_stream');
        await store.appendToStream(stream, [newEvent('Other'), newEvent(wanted, { n: 1 }), newEvent('Other'), newEvent('Other')], 0n);
        const subscription = store.subscribeToAll({ after: start.position, types: new Set([wanted, 'NeverAppended']) });
        const seen: StoredEvent[] = [];
        const received = take(subscription, 3, (e) => (seen.push(e), e.streamId === stream));
        await sleep(100);
        await store.appendToStream(stream, [newEvent('Other'), newEvent('Other')], 4n);
        await store.appendToStream(stream, [newEvent(wanted, { n: 2 }), newEvent('Other'), newEvent(wanted, { n: 3 })], 6n);
        const events = await received;
        expect(events.map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
        expectIncreasing(events.map((e) => e.position));
        // Nothing of another type was handed over, from any stream.
        expect(seen.every((e) => e.type === wanted || e.type === 'NeverAppended')).toBe(true);
      });

      it('resumes exactly after each event of a batch: nothing skipped, nothing repeated', async () => {
        const stream = streamName();
        const types = ['A', 'B', 'C', 'D', 'E'];
        await store.appendToStream(stream, types.map((t) => newEvent(t)), 'no_stream');
        await store.appendToStream(streamName(), [newEvent('Elsewhere')], 'no_stream');
        const events = await store.readStream(stream);
        for (const [i, event] of events.entries()) {
          const rest = types.slice(i + 1);
          if (rest.length === 0) continue;
          const received = await take(store.subscribeToAll({ after: event.position }), rest.length, (e) => e.streamId === stream);
          expect(received.map((e) => e.type), `after ${event.type}`).toEqual(rest);
        }
      });

      it(`consumes ${longLogEvents} events through one subscription without keeping anything per event`, async () => {
        const gc = exposedGc();
        const start = await store.headPosition();
        const stream = streamName();
        const batch = 500;
        for (let i = 0; i < longLogEvents; i += batch) {
          const events = Array.from({ length: batch }, (_, j) => newEvent('Long', { n: i + j }));
          await store.appendToStream(stream, events, i === 0 ? 'no_stream' : BigInt(i - 1));
        }
        const subscription = store.subscribeToAll(afterOption(start));
        const iterator = subscription[Symbol.asyncIterator]();
        let seen = 0;
        const readUntil = async (count: number): Promise<void> => {
          while (seen < count) {
            const next = await iterator.next();
            if (next.done) throw new Error(`the subscription ended after ${seen} events`);
            if (next.value.streamId === stream) seen += 1;
          }
        };
        const warmUp = 2_000;
        try {
          await readUntil(warmUp);
          const before = await heapAfterGc(gc);
          await readUntil(longLogEvents);
          // Measured while the subscription is still open: what it holds per event is still held.
          const perEvent = ((await heapAfterGc(gc)) - before) / (longLogEvents - warmUp);
          // Racing each event against a promise that settles at close kept ~400 bytes per event.
          expect(perEvent).toBeLessThan(40);
        } finally {
          await subscription.close();
        }
        expect(seen).toBe(longLogEvents);
      }, 120_000);

      it('ends a pending iteration when closed', async () => {
        const subscription = store.subscribeToAll({ after: (await store.headPosition()) ?? 0n });
        const iterator = subscription[Symbol.asyncIterator]();
        const pending = iterator.next();
        await sleep(50);
        await subscription.close();
        await expect(withTimeout(pending, 2000, 'next() after close()')).resolves.toEqual({ done: true, value: undefined });
      });
    });

    describe('the hash chain', () => {
      const linksOf = async (stream: string) => (await collect(store.readChain())).flat().filter((l) => l.streamId === stream);

      it('stores each event with the hash of its stored texts chained to its predecessor in the stream', async () => {
        const stream = streamName();
        const other = streamName();
        await store.appendToStream(stream, [newEvent('A'), newEvent('B', { v: 'é\u0000"', n: -0.5 })], 'no_stream');
        await store.appendToStream(other, [newEvent('X')], 'no_stream');
        await store.appendToStream(stream, [newEvent('C')], 'any');
        await store.appendToStream(stream, [newEvent('D')], 'stream_exists');
        await store.appendToStream(stream, [newEvent('E')], 3n);
        const links = await linksOf(stream);
        const events = await store.readStream(stream);
        expect(links.map((l) => l.type)).toEqual(['A', 'B', 'C', 'D', 'E']);
        let previous = GENESIS_HASH;
        for (const [i, link] of links.entries()) {
          const event = events[i]!;
          expect(link).toMatchObject({ id: event.id, revision: event.revision, position: event.position });
          expect(JSON.parse(link.data)).toEqual(event.data);
          expect(JSON.parse(link.metadata)).toEqual(event.metadata);
          expect(link.hash).toBe(chainHash(previous, link));
          previous = link.hash!;
        }
        // Another stream's chain starts afresh.
        const [x] = await linksOf(other);
        expect(x!.hash).toBe(chainHash(GENESIS_HASH, x!));
      });

      it('keeps the chain whole across a retried append, which stores nothing', async () => {
        const stream = streamName();
        const first = [newEvent('A'), newEvent('B')];
        await store.appendToStream(stream, first, 'no_stream');
        await store.appendToStream(stream, first, 'no_stream');
        await store.appendToStream(stream, [newEvent('C')], 1n);
        const links = await linksOf(stream);
        expect(links.map((l) => l.revision)).toEqual([0n, 1n, 2n]);
        expect(links[2]!.hash).toBe(chainHash(links[1]!.hash!, links[2]!));
      });

      it('chains concurrent appends without a revision into one line', async () => {
        const stream = streamName();
        await store.appendToStream(stream, [newEvent('A')], 'no_stream');
        await Promise.all(Array.from({ length: 8 }, (_, i) => store.appendToStream(stream, [newEvent(`N${i}`)], 'any')));
        const links = await linksOf(stream);
        expect(links).toHaveLength(9);
        for (let i = 1; i < links.length; i++) expect(links[i]!.hash).toBe(chainHash(links[i - 1]!.hash!, links[i]!));
      });
    });
  });
}

export function streamName(prefix = 'contract'): string {
  return `${prefix}-${randomUUID().replaceAll('-', '')}`;
}

export function newEvent(
  type: string,
  data: EventPayload = { v: 1, at: type },
  metadata: EventMetadata = { actor: 'system:test', correlationId: randomUUID(), time: new Date().toISOString() },
): NewEvent {
  return { id: randomUUID(), type, data, metadata };
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** The first `count` events that pass `keep`; closes the subscription, and fails after a timeout. */
export async function take(
  subscription: Subscription,
  count: number,
  keep: (event: StoredEvent) => boolean = () => true,
  timeoutMs = 10_000,
): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  const reading = (async () => {
    for await (const event of subscription) {
      if (!keep(event)) continue;
      events.push(event);
      if (events.length === count) break;
    }
  })();
  try {
    await withTimeout(reading, timeoutMs, `${count} events from the subscription (got ${events.length})`);
  } finally {
    await subscription.close();
  }
  return events;
}

export function expectIncreasing(positions: readonly Position[]): void {
  for (const p of positions) expect(typeof p).toBe('bigint');
  for (let i = 1; i < positions.length; i++) {
    expect(positions[i]! > positions[i - 1]!, `position ${i} (${positions[i]}) after ${positions[i - 1]}`).toBe(true);
  }
}

function compareBigints(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function afterOption(position: Position | undefined): { after?: Position } {
  return position === undefined ? {} : { after: position };
}

async function expectConflict(append: Promise<unknown>, actual: bigint | 'no_stream'): Promise<void> {
  const error = await append.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WrongExpectedRevisionError);
  expect((error as WrongExpectedRevisionError).actual).toBe(actual);
}

/**
 * The collector, for measuring what stays reachable. Exposing it from within the process is a
 * documented V8 flag; a context made after the flag is set carries `gc`.
 */
export function exposedGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  if (typeof gc !== 'function') throw new Error('V8 did not expose gc');
  return () => {
    gc();
  };
}

/**
 * Heap in use after two full collections (the second catches what finalizers released). The event
 * loop turns first: callbacks streams queued with process.nextTick while a consumer kept the
 * microtask queue busy run then, so they are not counted as kept.
 */
export async function heapAfterGc(gc: () => void): Promise<number> {
  await setImmediatePromise();
  await setImmediatePromise();
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

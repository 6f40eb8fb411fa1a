import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { WrongExpectedRevisionError, type StoredEvent } from '../../stores/eventstore/eventStore';
import { DuplicateEventIdError, SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { collect, eventStoreContract, expectIncreasing, newEvent, streamName, take } from './eventStore.contract';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-event-store-'));
const freshFile = (): string => join(dir, `${randomUUID()}.sqlite`);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let lastFile = '';
eventStoreContract(
  'SqliteEventStore on a file',
  async () => SqliteEventStore.open((lastFile = freshFile())),
  undefined,
  { reopen: async () => SqliteEventStore.open(lastFile), longLogEvents: 50_000 },
);
eventStoreContract('SqliteEventStore in memory', async () => SqliteEventStore.open(':memory:'), undefined, { longLogEvents: 50_000 });

describe('SqliteEventStore', () => {
  const opened: SqliteEventStore[] = [];
  const open = (file: string): SqliteEventStore => {
    const store = SqliteEventStore.open(file);
    opened.push(store);
    return store;
  };

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });

  it('finds an event of the types asked for past more events of others than a page looks through, and stays live after them', async () => {
    const store = open(freshFile());
    // More than one window of positions (16,384) of other types, then the one asked for.
    const others = Array.from({ length: 40_000 }, () => newEvent('Sample'));
    await store.appendToStream('samples', others, 'no_stream');
    await store.appendToStream('requests', [newEvent('Requested', { n: 1 })], 'no_stream');
    const subscription = store.subscribeToAll({ types: new Set(['Requested']) });
    const received = take(subscription, 2);
    await store.appendToStream('samples', Array.from({ length: 20_000 }, () => newEvent('Sample')), 39_999n);
    await store.appendToStream('requests', [newEvent('Requested', { n: 2 })], 0n);
    expect((await received).map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('runs in WAL mode with synchronous=FULL', () => {
    const file = freshFile();
    const store = open(file);
    expect(store.durability()).toEqual({ journalMode: 'wal', synchronous: 2 });
    // WAL is a property of the file: a plain connection sees it too.
    const raw = new Database(file, { readonly: true });
    try {
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      raw.close();
    }
  });

  it('commits the appends made in one turn of the event loop in one transaction', async () => {
    const file = freshFile();
    const store = open(file);
    // Every commit appends at least one frame per changed page to the WAL (no checkpoint runs below
    // 1000 pages), so WAL growth counts commits: one at a time, then 50 at once.
    const frame = Number((store as unknown as { db: Database.Database }).db.pragma('page_size', { simple: true })) + 24;
    const walFrames = () => statSync(`${file}-wal`).size / frame;
    await store.appendToStream(streamName(), [newEvent('A')], 'no_stream');
    let before = walFrames();
    for (let i = 0; i < 10; i++) await store.appendToStream(streamName(), [newEvent('A')], 'no_stream');
    expect(walFrames() - before).toBeGreaterThanOrEqual(10);
    before = walFrames();
    await Promise.all(Array.from({ length: 50 }, () => store.appendToStream(streamName(), [newEvent('A')], 'no_stream')));
    // 50 commits would write at least 50 frames; one writes the pages the 50 rows fill.
    expect(walFrames() - before).toBeLessThan(25);
    expect(await collect(store.readAll())).toHaveLength(61);
  });

  it('commits appends still queued when closed', async () => {
    const file = freshFile();
    const store = SqliteEventStore.open(file);
    const stream = streamName();
    const appended = store.appendToStream(stream, [newEvent('A')], 'no_stream');
    await store.close();
    await expect(appended).resolves.toMatchObject({ nextExpectedRevision: 0n });
    const reopened = open(file);
    expect((await reopened.readStream(stream)).map((e) => e.type)).toEqual(['A']);
  });

  it('answers a storage failure to every append of the group, storing none', async () => {
    const file = freshFile();
    const store = open(file);
    // Another connection holds the write lock past the busy timeout.
    const blocker = new Database(file, { timeout: 0 });
    const streams = [streamName(), streamName()];
    try {
      blocker.exec('BEGIN IMMEDIATE');
      const db = (store as unknown as { db: Database.Database }).db;
      db.pragma('busy_timeout = 0');
      const outcomes = await Promise.allSettled(streams.map((s) => store.appendToStream(s, [newEvent('A')], 'no_stream')));
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
      expect((outcomes[0] as PromiseRejectedResult).reason).toBeInstanceOf(Database.SqliteError);
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    for (const s of streams) expect(await store.readStream(s)).toEqual([]);
  });

  it('keeps its events across close and reopen, and positions keep increasing', async () => {
    const file = freshFile();
    const stream = streamName();
    const first = SqliteEventStore.open(file);
    const written = await first.appendToStream(stream, [newEvent('A'), newEvent('B')], 'no_stream');
    await first.close();

    const reopened = open(file);
    const events = await reopened.readStream(stream);
    expect(events.map((e) => e.type)).toEqual(['A', 'B']);
    expect(await reopened.headPosition()).toBe(written.position);
    const next = await reopened.appendToStream(stream, [newEvent('C')], 1n);
    expect(next.position).toBeGreaterThan(written.position);
  });

  it('shows appends made through one instance to a subscription of another on the same file', async () => {
    const file = freshFile();
    const writer = open(file);
    const reader = open(file);
    const stream = streamName();
    await writer.appendToStream(stream, [newEvent('Before')], 'no_stream');
    const subscription = reader.subscribeToAll({ after: (await reader.headPosition()) ?? 0n });
    const received = take(subscription, 3, undefined, 5000);
    await writer.appendToStream(stream, [newEvent('L1')], 0n);
    await writer.appendToStream(stream, [newEvent('L2'), newEvent('L3')], 1n);
    expect((await received).map((e) => e.type)).toEqual(['L1', 'L2', 'L3']);
  });

  it('checks expected revisions across instances on the same file', async () => {
    const file = freshFile();
    const a = open(file);
    const b = open(file);
    const stream = streamName();
    await a.appendToStream(stream, [newEvent('A')], 'no_stream');
    await expect(b.appendToStream(stream, [newEvent('B')], 'no_stream')).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    await b.appendToStream(stream, [newEvent('B')], 0n);
    expect((await a.readStream(stream)).map((e) => e.type)).toEqual(['A', 'B']);
  });

  it('keeps positions beyond 2^31 and 2^53 exact and in order', async () => {
    const file = freshFile();
    const store = open(file);
    const stream = streamName();
    await store.appendToStream(stream, [newEvent('Small')], 'no_stream');

    const raw = new Database(file);
    const setSequence = (seq: bigint): void => {
      raw.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'events'").run(seq);
    };
    try {
      setSequence(2n ** 31n - 2n);
      const around31 = await store.appendToStream(stream, [newEvent('A'), newEvent('B'), newEvent('C')], 0n);
      setSequence(2n ** 53n - 2n);
      const around53 = await store.appendToStream(stream, [newEvent('D'), newEvent('E'), newEvent('F')], 3n);
      expect(around31.position).toBe(2n ** 31n + 1n);
      expect(around53.position).toBe(2n ** 53n + 1n);
    } finally {
      raw.close();
    }

    const events = await store.readStream(stream);
    const positions = events.map((e) => e.position);
    expect(positions.slice(1)).toEqual([
      2n ** 31n - 1n,
      2n ** 31n,
      2n ** 31n + 1n,
      2n ** 53n - 1n,
      2n ** 53n,
      2n ** 53n + 1n,
    ]);
    expectIncreasing(positions);
    expect(await store.headPosition()).toBe(2n ** 53n + 1n);

    // Exclusive `after` must hold where a double could no longer tell 2^53 from 2^53 + 1.
    const after = await collect(store.readAll({ after: 2n ** 53n }));
    expect(after.map((e) => e.type)).toEqual(['F']);
    const live = await take(store.subscribeToAll({ after: 2n ** 53n - 1n }), 2);
    expect(live.map((e) => e.type)).toEqual(['E', 'F']);
  });

  it('stores an append retried with a later expected revision once', async () => {
    const store = open(freshFile());
    const stream = streamName();
    const batch = [newEvent('A'), newEvent('B')];
    const first = await store.appendToStream(stream, batch, 'no_stream');
    // The caller re-read the stream (now at revision 1) before retrying.
    expect(await store.appendToStream(stream, batch, 1n)).toEqual(first);
    expect(await store.appendToStream(stream, batch, 'any')).toEqual(first);
    expect(await store.readStream(stream)).toHaveLength(2);
  });

  it('refuses an event id already stored elsewhere or repeated in the batch, storing nothing of it', async () => {
    const store = open(freshFile());
    const taken = newEvent('Taken');
    await store.appendToStream(streamName(), [taken], 'no_stream');

    const first = streamName();
    await expect(store.appendToStream(first, [taken], 'no_stream')).rejects.toBeInstanceOf(DuplicateEventIdError);
    const later = streamName();
    await expect(store.appendToStream(later, [newEvent('New'), taken], 'no_stream')).rejects.toBeInstanceOf(
      DuplicateEventIdError,
    );
    const twice = newEvent('Twice');
    const repeated = streamName();
    await expect(store.appendToStream(repeated, [twice, twice], 'no_stream')).rejects.toMatchObject({ eventId: twice.id });
    expect(await store.readStream(first)).toEqual([]);
    expect(await store.readStream(later)).toEqual([]);
    expect(await store.readStream(repeated)).toEqual([]);
  });

  it('keeps its identity in the file, apart from the events, and two instances opening a new file agree on it', async () => {
    const file = freshFile();
    const [a, b] = [open(file), open(file)];
    expect(await a.identity()).toBe(await b.identity());
    expect(await open(freshFile()).identity()).not.toBe(await a.identity());
    expect(await a.headPosition()).toBeUndefined();
  });

  it('refuses an empty append', async () => {
    const store = open(freshFile());
    await expect(store.appendToStream(streamName(), [], 'any')).rejects.toThrow(/at least one event/);
  });

  it('catches a subscription up across several pages without gaps or duplicates', async () => {
    const store = open(freshFile());
    const stream = streamName();
    const total = 1000;
    for (let i = 0; i < total; i += 100) {
      const batch = Array.from({ length: 100 }, (_, j) => newEvent(`E${i + j}`));
      await store.appendToStream(stream, batch, i === 0 ? 'no_stream' : BigInt(i - 1));
    }
    const events = await take(store.subscribeToAll(), total);
    expect(events.map((e) => e.revision)).toEqual(Array.from({ length: total }, (_, i) => BigInt(i)));
    expectIncreasing(events.map((e) => e.position));
  });

  it('reads a page once for the subscriptions one commit wakes, each getting events of its own', async () => {
    const store = open(freshFile());
    const statement = (store as unknown as { selectEventsAfter: { all: (...args: unknown[]) => unknown[] } }).selectEventsAfter;
    const all = statement.all.bind(statement);
    let reads = 0;
    statement.all = (...args: unknown[]) => ((reads += 1), all(...args));
    // Ended by the store's close (afterEach).
    const iterators = Array.from({ length: 5 }, () => store.subscribeToAll()[Symbol.asyncIterator]());
    {
      // Started in one turn, they read the empty log once together, then wait.
      const first = iterators.map((it) => it.next());
      await new Promise((done) => setImmediate(done));
      expect(reads).toBe(1);
      reads = 0;
      await store.appendToStream(streamName(), [newEvent('A', { list: [1, 2] })], 'no_stream');
      const got = (await Promise.all(first)).map((r) => r.value as StoredEvent);
      expect(got.map((e) => e.type)).toEqual(['A', 'A', 'A', 'A', 'A']);
      expect(reads).toBe(1);
      // Parsed apart: one reader changing its event changes no other's.
      (got[0]!.data.list as number[]).push(3);
      expect(got[1]!.data.list).toEqual([1, 2]);
      // A later commit is read afresh: the next page is not the one already had.
      const second = iterators.map((it) => it.next());
      await store.appendToStream(streamName(), [newEvent('B')], 'no_stream');
      expect((await Promise.all(second)).map((r) => (r.value as StoredEvent).type)).toEqual(['B', 'B', 'B', 'B', 'B']);
    }
  });

  it('keeps a few of the pages read in one turn, however many a reader catching up goes through', async () => {
    const store = open(freshFile());
    for (let i = 0; i < 10; i++) await store.appendToStream(streamName(), Array.from({ length: 256 }, () => newEvent('E')), 'no_stream');
    const inside = store as unknown as { pageAfter(after: bigint): { position: bigint }[]; pagesThisTurn: Map<bigint, unknown> };
    let after = 0n;
    let read = 0;
    // Synchronously, so all in one turn.
    for (let rows = inside.pageAfter(after); rows.length > 0; rows = inside.pageAfter(after)) {
      read += rows.length;
      after = rows.at(-1)!.position;
      expect(inside.pagesThisTurn.size).toBeLessThanOrEqual(4);
    }
    expect(read).toBe(2560);
  });

  it('ends its subscriptions when the store closes', async () => {
    const store = SqliteEventStore.open(freshFile());
    const iterator = store.subscribeToAll()[Symbol.asyncIterator]();
    const pending = iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await store.close();
    await expect(pending).resolves.toEqual({ done: true, value: undefined });
  });
});

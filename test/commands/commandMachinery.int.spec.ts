import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventId, type CommandContext } from '../../commands/commandContext';
import { handleCommand } from '../../commands/handleCommand';
import { IdAllocator } from '../../commands/idAllocator';
import { hashPassword, scryptCost, verifyPassword } from '../../commands/passwords';
import { keyedReservationStream, RESERVATION_KEY_SUBJECT, UniquenessReservations, reservationStream } from '../../commands/uniqueness';
import type { Decider, DomainEvent } from '../../domain/shared/decider';
import { ConflictError } from '../../domain/shared/errors';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { SqliteKeyStore } from '../../stores/keystore/sqliteKeyStore';

const ctx = (overrides: Partial<CommandContext> = {}): CommandContext => ({
  actor: 'user:1',
  correlationId: 'req-1',
  now: new Date('2026-11-25T12:00:00.000Z'),
  ...overrides,
});

type Incremented = DomainEvent<'Incremented', { by: number }>;
const counter: Decider<{ by: number }, Incremented, number> = {
  initialState: () => 0,
  decide: (c) => [{ type: 'Incremented', data: { by: c.by } }],
  evolve: (s, e) => s + e.data.by,
};

describe('command handling', () => {
  it('appends the decided events with the context as metadata', async () => {
    const store = SqliteEventStore.open(':memory:');
    const result = await handleCommand(store, 'counter-1', counter, { by: 2 }, ctx({ causationId: 'cmd-9' }));
    expect(result.state).toBe(2);
    const [stored] = await store.readStream('counter-1');
    expect(stored!.metadata).toEqual({ actor: 'user:1', correlationId: 'req-1', causationId: 'cmd-9', time: '2026-11-25T12:00:00.000Z' });
  });

  it('never loses an update when commands race on one aggregate', async () => {
    const store = SqliteEventStore.open(':memory:');
    await Promise.all(Array.from({ length: 12 }, () => handleCommand(store, 'counter-1', counter, { by: 1 }, ctx())));
    const events = await store.readStream('counter-1');
    expect(events).toHaveLength(12);
    expect(events.map((e) => e.revision)).toEqual(Array.from({ length: 12 }, (_, i) => BigInt(i)));
  });

  it('decides on a new stream without reading it, and on the stream as it is should it exist after all', async () => {
    const store = SqliteEventStore.open(':memory:');
    const reads: string[] = [];
    const counted = new Proxy(store, {
      get(target, property) {
        if (property === 'readStream') return (id: string) => (reads.push(id), target.readStream(id));
        const value = Reflect.get(target, property) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    expect((await handleCommand(counted, 'counter-new', counter, { by: 2 }, ctx(), { newStream: true })).state).toBe(2);
    expect(reads).toEqual([]);
    // Not new after all: the "no stream" append is refused, and the retry reads and folds the stream.
    const again = await handleCommand(counted, 'counter-new', counter, { by: 3 }, ctx(), { newStream: true });
    expect(again.state).toBe(5);
    expect(reads).toEqual(['counter-new']);
    expect((await store.readStream('counter-new')).map((e) => e.data.by)).toEqual([2, 3]);
  });

  it('derives the same event ids from the same command id, so a resent saga command is stored once', async () => {
    const store = SqliteEventStore.open(':memory:');
    expect(eventId(ctx({ commandId: 'saga-7' }), 0)).toBe(eventId(ctx({ commandId: 'saga-7' }), 0));
    expect(eventId(ctx({ commandId: 'saga-7' }), 0)).not.toBe(eventId(ctx({ commandId: 'saga-7' }), 1));
    expect(eventId(ctx({ commandId: 'saga-7' }), 0)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const first = await store.appendToStream('s-1', [{ id: eventId(ctx({ commandId: 'c' }), 0), type: 'X', data: {}, metadata: { actor: 'a', correlationId: 'b', time: 't' } }], 'no_stream');
    const again = await store.appendToStream('s-1', [{ id: eventId(ctx({ commandId: 'c' }), 0), type: 'X', data: {}, metadata: { actor: 'a', correlationId: 'b', time: 't' } }], 'no_stream');
    expect(again.position).toBe(first.position);
    expect(await store.readStream('s-1')).toHaveLength(1);
  });

  it('gives a command without a command id new time-ordered ids (UUID v7), later ones sorting after earlier ones', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => eventId(ctx({}), i % 3));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});

describe('hi/lo id allocation', () => {
  it('hands out increasing ids from blocks reserved with one append each', async () => {
    const store = SqliteEventStore.open(':memory:');
    const ids = new IdAllocator(store, 5);
    const got: number[] = [];
    for (let i = 0; i < 12; i++) got.push(await ids.next('user'));
    expect(got).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(await store.readStream('idblocks-user')).toHaveLength(3);
  });

  it('never gives the same id twice, across allocators racing on one store', async () => {
    const store = SqliteEventStore.open(':memory:');
    const allocators = [new IdAllocator(store, 3), new IdAllocator(store, 3), new IdAllocator(store, 3)];
    const got = await Promise.all(Array.from({ length: 60 }, (_, i) => allocators[i % 3]!.next('project')));
    expect(new Set(got).size).toBe(60);
  });

  it('continues after the highest reserved block when a process starts again', async () => {
    const store = SqliteEventStore.open(':memory:');
    expect(await new IdAllocator(store, 10).next('user')).toBe(1);
    expect(await new IdAllocator(store, 10).next('user')).toBe(11);
  });
});

describe('uniqueness reservations', () => {
  it('keep the value out of the stream name', () => {
    expect(reservationStream('email', 'Ada@Example.com')).toBe(reservationStream('email', 'ada@example.com'));
    expect(reservationStream('email', 'ada@example.com')).not.toContain('ada');
  });

  it('name an e-mail reservation by a keyed hash: the log alone cannot confirm a guessed address', async () => {
    const store = SqliteEventStore.open(':memory:');
    const keys = SqliteKeyStore.open(':memory:');
    const r = new UniquenessReservations(store, keys);
    await r.reserve('email', 'Ada@Example.com', 'user-1', ctx(), 'taken');
    const streams = new Set<string>();
    for await (const event of store.readAll()) streams.add(event.streamId);
    const key = (await keys.get(RESERVATION_KEY_SUBJECT))!;
    expect([...streams]).toEqual([keyedReservationStream('email', 'ada@example.com', key)]);
    // Neither the address nor its plain hash; another installation's key gives another name.
    expect([...streams][0]).not.toContain('ada');
    expect([...streams][0]).not.toContain(reservationStream('email', 'ada@example.com').slice('unique-email-'.length));
    expect(keyedReservationStream('email', 'ada@example.com', Buffer.alloc(32, 1))).not.toBe([...streams][0]);
    // Values that are not personal keep their plain names (an API key's hash, a sample's content).
    await r.reserve('apikey', 'h', 'project-1', ctx(), 'taken');
    const names: string[] = [];
    for await (const event of store.readAll()) names.push(event.streamId);
    expect(names).toContain(reservationStream('apikey', 'h'));
  });

  it('still hold e-mails reserved under the plain hash of a log written before, and release them', async () => {
    const store = SqliteEventStore.open(':memory:');
    const r = new UniquenessReservations(store, SqliteKeyStore.open(':memory:'));
    const before = reservationStream('email', 'old@example.com');
    await store.appendToStream(before, [{ id: randomUUID(), type: 'ValueReserved', data: { kind: 'email', owner: 'user-1' }, metadata: { actor: 'user-1', correlationId: 'c', time: ctx().now.toISOString() } }], 'no_stream');
    expect(await r.isReserved('email', 'OLD@example.com')).toBe(true);
    await expect(r.reserve('email', 'old@example.com', 'user-2', ctx(), 'taken')).rejects.toThrow(ConflictError);
    // Its holder keeps it without a second reservation.
    await r.reserve('email', 'old@example.com', 'user-1', ctx(), 'taken');
    await r.release('email', 'old@example.com', 'user-1', ctx());
    expect(await r.isReserved('email', 'old@example.com')).toBe(false);
    await r.reserve('email', 'old@example.com', 'user-2', ctx(), 'taken');
    expect(await r.isReserved('email', 'old@example.com')).toBe(true);
    expect((await store.readStream(before)).map((e) => e.type)).toEqual(['ValueReserved', 'ValueReleased']);
  });

  it('take over an e-mail reserved under the plain hash by an owner who never came to exist, and release it there', async () => {
    const store = SqliteEventStore.open(':memory:');
    const r = new UniquenessReservations(store, SqliteKeyStore.open(':memory:'));
    const before = reservationStream('email', 'ghost@example.com');
    await store.appendToStream(before, [{ id: randomUUID(), type: 'ValueReserved', data: { kind: 'email', owner: 'user-404' }, metadata: { actor: 'user-404', correlationId: 'c', time: ctx().now.toISOString() } }], 'no_stream');
    await expect(r.reserve('email', 'ghost@example.com', 'user-5', ctx(), 'taken')).rejects.toThrow(ConflictError);
    await r.reserve('email', 'ghost@example.com', 'user-5', ctx({ now: new Date('2026-11-25T12:02:00.000Z') }), 'taken');
    expect((await store.readStream(before)).at(-1)).toMatchObject({ type: 'ValueReleased', data: { owner: 'user-404' } });
    await r.release('email', 'ghost@example.com', 'user-5', ctx());
    expect(await r.isReserved('email', 'ghost@example.com')).toBe(false);
  });

  it('let one owner hold a value, refuse others, and free it on release', async () => {
    const store = SqliteEventStore.open(':memory:');
    const r = new UniquenessReservations(store, SqliteKeyStore.open(':memory:'));
    await r.reserve('username', 'ada', 'user-1', ctx(), 'taken');
    await r.reserve('username', 'ada', 'user-1', ctx(), 'taken');
    await expect(r.reserve('username', 'ADA', 'user-2', ctx(), 'taken')).rejects.toThrow(ConflictError);
    expect(await r.isReserved('username', 'ada')).toBe(true);
    await r.release('username', 'ada', 'user-1', ctx());
    expect(await r.isReserved('username', 'ada')).toBe(false);
    await r.reserve('username', 'ada', 'user-2', ctx(), 'taken');
  });

  it('let exactly one of two racing owners win', async () => {
    const store = SqliteEventStore.open(':memory:');
    const r = new UniquenessReservations(store, SqliteKeyStore.open(':memory:'));
    const results = await Promise.allSettled([1, 2, 3].map((i) => r.reserve('email', 'x@y.z', `user-${i}`, ctx(), 'taken')));
    expect(results.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
  });

  it('take over a reservation whose owner never came to exist after a minute', async () => {
    const store = SqliteEventStore.open(':memory:');
    const r = new UniquenessReservations(store, SqliteKeyStore.open(':memory:'));
    await r.reserve('username', 'ghost', 'user-404', ctx(), 'taken');
    await expect(r.reserve('username', 'ghost', 'user-5', ctx(), 'taken')).rejects.toThrow(ConflictError);
    const later = ctx({ now: new Date('2026-11-25T12:02:00.000Z') });
    await r.reserve('username', 'ghost', 'user-5', later, 'taken');
  });
});

describe('password hashing', () => {
  it('verifies the right password and refuses a wrong one', async () => {
    const hash = await hashPassword('s3cret-pass');
    // The cost this process hashes at (lowered for tests; passwords.unit.spec.ts checks production's).
    expect(hash).toMatch(new RegExp(`^scrypt\\$${scryptCost(process.env).N}\\$8\\$1\\$`));
    expect(hash).not.toContain('s3cret');
    expect(await verifyPassword('s3cret-pass', hash)).toBe(true);
    expect(await verifyPassword('s3cret-pasS', hash)).toBe(false);
    expect(await verifyPassword('x', 'garbage')).toBe(false);
  });
});

// A key store that lost a key (keys.sqlite-wal lost) must not make a new key for a
// subject whose data the log holds sealed; the subject is named; its data reads as forgotten; and data
// sealed with a key that is gone (made anew by an earlier version) reads as forgotten too, rather
// than stopping every read model at that event.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sealedFieldsByEventType } from '../../domain/personalData';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { SealingEventStore, SealingKeyLostError } from '../../stores/keystore/sealingEventStore';
import { SqliteKeyStore } from '../../stores/keystore/sqliteKeyStore';

const meta = { actor: 'anonymous', correlationId: 'c', time: 't' };
const registered = (userId: number) => ({
  id: randomUUID(),
  type: 'UserRegistered',
  data: { userId, username: `u${userId}`, name: 'Ada', email: 'ada@example.com', jobTitle: null, companyName: null, passwordHash: 'h', registered: 't' },
  metadata: meta,
});
const renamed = (userId: number) => ({ id: randomUUID(), type: 'UserProfileUpdated', data: { userId, name: 'Ada L.', jobTitle: null, companyName: null }, metadata: meta });

describe('a sealing key the key store lost', () => {
  it('is not made anew for a subject with sealed data: the write is refused naming it, and its data reads as forgotten', async () => {
    const raw = SqliteEventStore.open(':memory:');
    const keys = SqliteKeyStore.open(':memory:');
    const lost: string[] = [];
    const store = new SealingEventStore(raw, keys, sealedFieldsByEventType, () => {}, (subject) => lost.push(subject));
    await store.appendToStream('user-1', [registered(1)], 'no_stream');
    // The key row gone as a lost write-ahead log loses it: no destroy, no tombstone.
    (keys as unknown as { db: { prepare(sql: string): { run(): unknown } } }).db.prepare('DELETE FROM subject_keys').run();
    const restarted = new SealingEventStore(raw, keys, sealedFieldsByEventType, () => {}, (subject) => lost.push(subject));
    const [read] = await restarted.readStream('user-1');
    expect(read!.data).toMatchObject({ userId: 1, name: null, email: null });
    expect(lost).toEqual(['user-1']);
    await expect(restarted.appendToStream('user-1', [renamed(1)], 'any')).rejects.toThrow(SealingKeyLostError);
    await expect(restarted.appendToStream('user-1', [renamed(1)], 'any')).rejects.toThrow(/user-1/);
    expect(await keys.get('user-1')).toBeUndefined();
  });

  it('is made anew for a subject forgotten on purpose, and a new subject gets one as before', async () => {
    const raw = SqliteEventStore.open(':memory:');
    const keys = SqliteKeyStore.open(':memory:');
    const store = new SealingEventStore(raw, keys, sealedFieldsByEventType);
    await store.appendToStream('user-1', [registered(1)], 'no_stream');
    await store.destroySubject('user-1');
    await store.appendToStream('user-1', [renamed(1)], 'any');
    await store.appendToStream('user-2', [registered(2)], 'no_stream');
    expect(await keys.get('user-2')).toBeDefined();
  });

  it('reads data sealed with a key that was replaced as forgotten, naming the subject, rather than failing the read', async () => {
    const raw = SqliteEventStore.open(':memory:');
    const keys = SqliteKeyStore.open(':memory:');
    await new SealingEventStore(raw, keys, sealedFieldsByEventType).appendToStream('user-1', [registered(1)], 'no_stream');
    // What an earlier version did after losing the key: another key made for the same subject.
    (keys as unknown as { db: { prepare(sql: string): { run(): unknown } } }).db.prepare('DELETE FROM subject_keys').run();
    await keys.getOrCreate('user-1');
    const unreadable: string[] = [];
    const store = new SealingEventStore(raw, keys, sealedFieldsByEventType, (subject) => unreadable.push(subject));
    const replay = [];
    for await (const e of store.readAll()) replay.push(e);
    expect(replay[0]!.data).toMatchObject({ userId: 1, name: null, email: null, username: 'u1' });
    expect(unreadable).toEqual(['user-1']);
  });
});

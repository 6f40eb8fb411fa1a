import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sealedFieldsByEventType } from '../../domain/personalData';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { SealingEventStore } from '../../stores/keystore/sealingEventStore';
import { SqliteKeyStore } from '../../stores/keystore/sqliteKeyStore';

const registered = (userId: number, email: string) => ({
  id: randomUUID(),
  type: 'UserRegistered',
  data: { userId, username: `u${userId}`, name: 'Ada', email, jobTitle: null, companyName: 'Engines', passwordHash: 'h', registered: 't' },
  metadata: { actor: 'anonymous', correlationId: 'c', time: 't' },
});

describe('sealing personal data in the log', () => {
  it('stores the declared fields sealed and gives them back in clear', async () => {
    const raw = SqliteEventStore.open(':memory:');
    const store = new SealingEventStore(raw, SqliteKeyStore.open(':memory:'), sealedFieldsByEventType);
    await store.appendToStream('user-1', [registered(1, 'ada@example.com')], 'no_stream');
    const [rawEvent] = await raw.readStream('user-1');
    expect(rawEvent!.data.email).toMatch(/^sealed:v1:/);
    expect(rawEvent!.data.name).toMatch(/^sealed:v1:/);
    expect(rawEvent!.data.username).toBe('u1');
    expect(rawEvent!.data.jobTitle).toBeNull();
    expect(JSON.stringify(rawEvent!.data)).not.toContain('ada@example.com');
    const [opened] = await store.readStream('user-1');
    expect(opened!.data).toMatchObject({ email: 'ada@example.com', name: 'Ada', companyName: 'Engines' });
  });

  it('forgets a subject for good: after its key is destroyed every read gives null', async () => {
    const raw = SqliteEventStore.open(':memory:');
    const keys = SqliteKeyStore.open(':memory:');
    const store = new SealingEventStore(raw, keys, sealedFieldsByEventType);
    await store.appendToStream('user-1', [registered(1, 'ada@example.com')], 'no_stream');
    await store.appendToStream('user-2', [registered(2, 'bob@example.com')], 'no_stream');
    await store.destroySubject('user-1');
    const replay = [];
    for await (const e of store.readAll()) replay.push(e);
    expect(replay[0]!.data).toMatchObject({ userId: 1, email: null, name: null, username: 'u1' });
    expect(replay[1]!.data).toMatchObject({ userId: 2, email: 'bob@example.com' });
    // A fresh decorator on the same stores (another process, a restart) agrees.
    const fresh = new SealingEventStore(raw, keys, sealedFieldsByEventType);
    expect((await fresh.readStream('user-1'))[0]!.data.email).toBeNull();
  });

  it('forgets a subject in another process that read its key, within the key cache time, without a restart', async () => {
    const raw = SqliteEventStore.open(':memory:');
    const keys = SqliteKeyStore.open(':memory:');
    const here = new SealingEventStore(raw, keys, sealedFieldsByEventType, () => {}, () => {}, 50);
    const elsewhere = new SealingEventStore(raw, keys, sealedFieldsByEventType, () => {}, () => {}, 50);
    await here.appendToStream('user-1', [registered(1, 'ada@example.com')], 'no_stream');
    expect((await elsewhere.readStream('user-1'))[0]!.data.email).toBe('ada@example.com');
    await here.destroySubject('user-1');
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect((await elsewhere.readStream('user-1'))[0]!.data.email).toBeNull();
    expect(await elsewhere.isForgotten((await elsewhere.readStream('user-1'))[0]!)).toBe(true);
  });

  it('opens events on a live subscription too', async () => {
    const store = new SealingEventStore(SqliteEventStore.open(':memory:'), SqliteKeyStore.open(':memory:'), sealedFieldsByEventType);
    const sub = store.subscribeToAll();
    await store.appendToStream('user-1', [registered(1, 'ada@example.com')], 'no_stream');
    for await (const e of sub) {
      expect(e.data.email).toBe('ada@example.com');
      break;
    }
    await sub.close();
  });
});

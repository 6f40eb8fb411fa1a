// The EventStoreDB adapter against an emulated server (esdbEventStore.fake.ts): the whole event
// store contract, and the server behaviours the adapter must cope with. The real server's run is
// esdbEventStore.int.spec.ts, when EVENTSTORE_URL is set.

import { Readable } from 'node:stream';
import {
  DeadlineExceededError,
  MaxAppendSizeExceededError,
  START,
  StreamDeletedError as EsdbStreamDeletedError,
  type AllStreamResolvedEvent,
} from '@eventstore/db-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  EsdbEventStore,
  IDENTITY_STREAM,
  type EsdbClient,
  type EsdbServerInfo,
  type EsdbSubscriptionSource,
} from '../../stores/eventstore/esdbEventStore';
import {
  AppendTooLargeError,
  EventStoreConfigurationError,
  EventStoreUnavailableError,
  StreamDeletedError,
  WrongExpectedRevisionError,
  type EventStore,
} from '../../stores/eventstore/eventStore';
import { FakeEsdbServer } from './esdbEventStore.fake';
import { collect, eventStoreContract, exposedGc, heapAfterGc, newEvent, streamName, take } from './eventStore.contract';

const SERVER: EsdbServerInfo = { version: '24.10.0.0', throwOnAppendFailure: true };

let lastServer: FakeEsdbServer | undefined;
eventStoreContract(
  'EsdbEventStore on an emulated server',
  async () => {
    lastServer = new FakeEsdbServer();
    return EsdbEventStore.open(lastServer, SERVER);
  },
  undefined,
  { reopen: async () => EsdbEventStore.open(lastServer!, SERVER), longLogEvents: 20_000 },
);

describe('EsdbEventStore on an emulated server', () => {
  const opened: EventStore[] = [];
  const open = async (server: EsdbClient, info: EsdbServerInfo = SERVER): Promise<EsdbEventStore> => {
    const store = await EsdbEventStore.open(server, info);
    opened.push(store);
    return store;
  };

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });

  describe('at connect', () => {
    it.each(['22.6.0.0', '22.10.2.0', '23.10.1', '24.10.0.0', '25.0.0'])('accepts server %s', async (version) => {
      await expect(open(new FakeEsdbServer(), { version, throwOnAppendFailure: true })).resolves.toBeInstanceOf(EsdbEventStore);
    });

    it.each(['22.2.0.0', '21.10.8.0', '20.10.5.0', 'unknown'])('refuses server %s, saying 22.6 is needed', async (version) => {
      const error = await open(new FakeEsdbServer(), { version, throwOnAppendFailure: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EventStoreConfigurationError);
      expect((error as Error).message).toMatch(/22\.6 or later/);
    });

    it('refuses throwOnAppendFailure=false, read from the real client before any server is asked', async () => {
      await expect(open(new FakeEsdbServer(), { ...SERVER, throwOnAppendFailure: false })).rejects.toBeInstanceOf(
        EventStoreConfigurationError,
      );
      const connecting = EsdbEventStore.connect('esdb://127.0.0.1:1?tls=false&throwOnAppendFailure=false');
      await expect(connecting).rejects.toThrow(/throwOnAppendFailure=false/);
    });

    it('answers an unreachable server with a retryable 503', async () => {
      const error = await EsdbEventStore.connect('esdb://127.0.0.1:1?tls=false').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EventStoreUnavailableError);
      expect(error).toMatchObject({ status: 503, retryable: true });
    });

    it('agrees on one identity when processes start at once on a new server, and keeps it out of the log', async () => {
      const server = new FakeEsdbServer();
      const stores = await Promise.all([open(server), open(server), open(server)]);
      const identities = await Promise.all(stores.map((s) => s.identity()));
      expect(new Set(identities).size).toBe(1);
      const [store] = stores;
      expect(await store!.headPosition()).toBeUndefined();
      expect(await collect(store!.readAll())).toEqual([]);
      const written = await collect(server.readStream(IDENTITY_STREAM, {}));
      expect(written.map((r) => r.event?.data)).toEqual([{ identity: identities[0] }]);
    });
  });

  describe('appending', () => {
    it('reports an append the client answered with success: false as a conflict, with the real revision', async () => {
      const server = new FakeEsdbServer();
      const store = await open(server);
      const stream = streamName();
      await store.appendToStream(stream, [newEvent('A'), newEvent('B')], 'no_stream');
      server.answerConflicts = true;
      const error = await store.appendToStream(stream, [newEvent('C')], 0n).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WrongExpectedRevisionError);
      expect(error).toMatchObject({ actual: 1n });
      expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['A', 'B']);
    });

    it('turns a deleted stream into a 410, a too large append into a 413, and a deadline into a retryable 503', async () => {
      const server = new FakeEsdbServer();
      const store = await open(server);
      const stream = streamName();
      server.failNext('appendToStream', EsdbStreamDeletedError.fromStreamName(stream));
      await expect(store.appendToStream(stream, [newEvent('A')], 'no_stream')).rejects.toMatchObject({
        constructor: StreamDeletedError,
        status: 410,
        code: 'STREAM_DELETED',
      });
      server.failNext('appendToStream', MaxAppendSizeExceededError.fromMaxAppendSize(1024));
      await expect(store.appendToStream(stream, [newEvent('A')], 'no_stream')).rejects.toMatchObject({
        constructor: AppendTooLargeError,
        status: 413,
      });
      server.failNext('appendToStream', new DeadlineExceededError(undefined, 'deadline exceeded'));
      await expect(store.appendToStream(stream, [newEvent('A')], 'no_stream')).rejects.toMatchObject({
        constructor: EventStoreUnavailableError,
        status: 503,
        retryable: true,
      });
      expect(await store.readStream(stream)).toEqual([]);
    });
  });

  describe('reading', () => {
    it('turns a deleted stream into a 410 and a deadline into a 503, for streams, $all and subscriptions', async () => {
      const server = new FakeEsdbServer();
      const store = await open(server);
      server.failNext('readStream', EsdbStreamDeletedError.fromStreamName('gone-1'));
      await expect(store.readStream('gone-1')).rejects.toMatchObject({ status: 410, streamId: 'gone-1' });
      server.failNext('readAll', new DeadlineExceededError(undefined, 'deadline exceeded'));
      await expect(collect(store.readAll())).rejects.toMatchObject({ status: 503 });
      server.failNext('readAll', new DeadlineExceededError(undefined, 'deadline exceeded'));
      await expect(store.headPosition()).rejects.toMatchObject({ status: 503 });
      server.failNext('subscribeToAll', new DeadlineExceededError(undefined, 'deadline exceeded'));
      await expect(collect(store.subscribeToAll())).rejects.toMatchObject({ status: 503 });
    });
  });

  describe('subscribing', () => {
    it('loses no event after a checkpoint whose event was scavenged, where the server alone would', async () => {
      const server = new FakeEsdbServer();
      const store = await open(server);
      const stream = streamName();
      await store.appendToStream(stream, ['A', 'B', 'C', 'D'].map((t) => newEvent(t)), 'no_stream');
      const [, b] = await store.readStream(stream);
      server.scavenge(b!.position);

      // The server's own answer from that position starts after C: the emulation reproduces the loss.
      const raw = server.subscribeToAll({ fromPosition: { commit: b!.position, prepare: b!.position } });
      const seenByServer: string[] = [];
      for await (const resolved of raw) {
        if (resolved.event?.streamId === stream) seenByServer.push(resolved.event.type);
        if (seenByServer.length === 1) break;
      }
      expect(seenByServer).toEqual(['D']);

      const received = await take(store.subscribeToAll({ after: b!.position }), 2, (e) => e.streamId === stream);
      expect(received.map((e) => e.type)).toEqual(['C', 'D']);
    });

    it('releases a subscription closed before or while it is iterated, and every one when the store closes', async () => {
      const server = new FakeEsdbServer();
      const store = await EsdbEventStore.open(server, SERVER);
      // Never iterated: nothing was asked of the server, nothing is left behind.
      await store.subscribeToAll().close();
      expect(server.openSubscriptions.size).toBe(0);

      const iterated = store.subscribeToAll();
      const iterator = iterated[Symbol.asyncIterator]();
      const pending = iterator.next();
      await new Promise((resolve) => setTimeout(resolve, 20));
      const [source] = [...server.openSubscriptions];
      expect(source).toBeDefined();
      await iterated.close();
      await expect(pending).resolves.toEqual({ done: true, value: undefined });
      expect(server.openSubscriptions.size).toBe(0);
      expect(source!.unsubscribed).toBe(true);

      const live = store.subscribeToAll()[Symbol.asyncIterator]();
      const waiting = live.next();
      await new Promise((resolve) => setTimeout(resolve, 20));
      await store.close();
      await expect(waiting).resolves.toEqual({ done: true, value: undefined });
      expect(server.openSubscriptions.size).toBe(0);
      expect(server.disposed).toBe(1);
    });

    it('keeps no listener, promise or closure per event on the client stream (100k events)', async () => {
      const total = 100_000;
      const server = new FakeEsdbServer();
      const source = new CountingSource(total);
      const client: EsdbClient = {
        appendToStream: (...args) => server.appendToStream(...args),
        readStream: (...args) => server.readStream(...args),
        readAll: (...args) => server.readAll(...args),
        subscribeToAll: (options) => {
          expect(options.fromPosition).toBe(START);
          return source;
        },
        dispose: () => server.dispose(),
      };
      const store = await open(client);
      const gc = exposedGc();
      const subscription = store.subscribeToAll();
      const iterator = subscription[Symbol.asyncIterator]();
      let seen = 0;
      const readUntil = async (count: number): Promise<void> => {
        for (; seen < count; seen++) if ((await iterator.next()).done) throw new Error(`ended after ${seen}`);
      };
      await readUntil(1_000);
      const listeners = source.listenerTotal();
      const before = await heapAfterGc(gc);
      await readUntil(total);
      const perEvent = ((await heapAfterGc(gc)) - before) / (total - 1_000);
      expect(source.listenerTotal()).toBe(listeners);
      expect(perEvent).toBeLessThan(40);
      await subscription.close();
      expect(source.destroyed).toBe(true);
      expect(source.unsubscribed).toBe(true);
    }, 60_000);
  });
});

/**
 * A client subscription that makes `total` events on demand, then waits as a live one does. Events
 * arrive in batches on later turns of the event loop, as gRPC messages do; the old adapter kept
 * ~380 bytes per event on such a stream.
 */
class CountingSource extends Readable implements EsdbSubscriptionSource {
  unsubscribed = false;
  private made = 0;

  constructor(private readonly total: number) {
    super({ objectMode: true, highWaterMark: 32 });
  }

  override _read(): void {
    setImmediate(() => {
      for (let i = 0; i < 16 && this.made < this.total; i++) this.pushNext();
    });
  }

  private pushNext(): void {
    this.made += 1;
    const position = BigInt(this.made) * 200n;
    this.push({
      event: {
        streamId: 'counted-1',
        id: `00000000-0000-4000-8000-${this.made.toString().padStart(12, '0')}`,
        revision: BigInt(this.made - 1),
        type: 'Counted',
        isJson: true,
        created: new Date(0),
        data: { n: this.made },
        metadata: { actor: 'system:test', correlationId: 'c', time: '2024-01-01T00:00:00.000Z' },
        position: { commit: position, prepare: position },
      },
    } satisfies AllStreamResolvedEvent);
  }

  listenerTotal(): number {
    return this.eventNames().reduce((sum, name) => sum + this.listenerCount(name), 0);
  }

  async unsubscribe(): Promise<void> {
    this.unsubscribed = true;
  }
}

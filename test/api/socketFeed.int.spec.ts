// The job websocket's shared log subscription and its per-job follower, on a real SQLite log with
// a subscription that fails, repeats or skips events: every line reaches the client once, in order.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobFollower, type JobLogSink } from '../../api/socket/jobFollower';
import { JobLogFeed } from '../../api/socket/jobLogFeed';
import { jobStream } from '../../domain/job/jobEvents';
import type { EventStore, StoredEvent, Subscription } from '../../stores/eventstore/eventStore';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';

const log = pino({ level: 'silent' });
const metadata = () => ({ actor: 'system:test', correlationId: 'feed-test', time: new Date().toISOString() });
// Category key 'simulated': no worker has a runner for it, so the service's own worker leaves these
// jobs to the test (generate-features now has a real runner).
const requested = (jobId: number, projectId: number) => ({
  id: randomUUID(),
  type: 'JobRequested',
  data: { jobId, projectId, organizationId: null, category: 'Generate features', categoryKey: 'simulated', key: '1', parameters: {}, jobNotificationUids: [], createdByUserId: null, created: new Date().toISOString() },
  metadata: metadata(),
});
const output = (jobId: number, text: string) => ({ id: randomUUID(), type: 'JobOutputWritten', data: { jobId, lines: [{ created: new Date().toISOString(), data: text, logLevel: 'info' }] }, metadata: metadata() });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The store, with subscriptions passed through `alter` (which may throw, drop or repeat events). */
function alteredStore(inner: EventStore, alter: (events: AsyncIterable<StoredEvent>, nth: number) => AsyncIterable<StoredEvent>): EventStore & { subscriptions: number } {
  const store = {
    subscriptions: 0,
    appendToStream: inner.appendToStream.bind(inner),
    readStream: inner.readStream.bind(inner),
    readAll: inner.readAll.bind(inner),
    headPosition: inner.headPosition.bind(inner),
    readChain: inner.readChain.bind(inner),
    identity: inner.identity.bind(inner),
    close: inner.close.bind(inner),
    subscribeToAll(options?: { after?: bigint }): Subscription {
      const subscription = inner.subscribeToAll(options);
      const altered = alter(subscription, store.subscriptions++);
      return { close: () => subscription.close(), [Symbol.asyncIterator]: () => altered[Symbol.asyncIterator]() };
    },
  };
  return store;
}

class RecordingSink implements JobLogSink {
  readonly sent: { event: string; payload: Record<string, unknown> }[] = [];
  send(event: string, payload: Record<string, unknown>): void {
    this.sent.push({ event, payload });
  }
  pendingBytes(): number {
    return 0;
  }
  async drained(): Promise<boolean> {
    return true;
  }
  drop(): void {
    throw new Error('not expected');
  }
}

describe('the job log feed and follower', () => {
  let dir: string;
  let inner: SqliteEventStore;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-feed-'));
    inner = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
  });
  afterEach(async () => {
    await inner.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('subscribes again after a failure, from the last event it delivered', async () => {
    const store = alteredStore(inner, async function* (events, nth) {
      let n = 0;
      for await (const e of events) {
        yield e;
        if (nth === 0 && ++n === 2) throw new Error('connection to the event store lost');
      }
    });
    const feed = new JobLogFeed(store, log, { idleStopMs: 1000, retryDelayMs: 20 });
    await inner.appendToStream(jobStream(1), [requested(1, 1)], 'no_stream');
    const seen: bigint[] = [];
    const unfollow = await feed.follow(jobStream(1), (e) => seen.push(e.revision));
    for (let i = 0; i < 5; i++) {
      await inner.appendToStream(jobStream(1), [output(1, `${i}\n`)], 'stream_exists');
      await sleep(30);
    }
    for (let i = 0; i < 100 && seen.length < 5; i++) await sleep(20);
    expect(seen).toEqual([1n, 2n, 3n, 4n, 5n]);
    expect(store.subscriptions).toBe(2);
    unfollow();
    await feed.close();
  });

  it('sends each line once and in order when the feed repeats and skips events', async () => {
    // The first subscription repeats every event and drops every third: the follower must drop the
    // repeats and read what was skipped from the stream.
    const store = alteredStore(inner, async function* (events) {
      let n = 0;
      for await (const e of events) {
        n += 1;
        if (n % 3 === 0) continue;
        yield e;
        yield e;
      }
    });
    const feed = new JobLogFeed(store, log, { idleStopMs: 1000, retryDelayMs: 20 });
    await inner.appendToStream(jobStream(2), [requested(2, 7), output(2, 'before\n')], 'no_stream');
    const sink = new RecordingSink();
    const follower = new JobFollower(2, 0, sink, { events: store, feed, log, limits: { pageSize: 2, highWaterBytes: 1024 } });
    expect(await follower.start(7)).toBe('following');
    const texts = Array.from({ length: 12 }, (_, i) => `live ${i}\n`);
    for (const text of texts) {
      await inner.appendToStream(jobStream(2), [output(2, text)], 'stream_exists');
      await sleep(5);
    }
    await inner.appendToStream(jobStream(2), [{ id: randomUUID(), type: 'JobFinished', data: { jobId: 2, finishedSuccessful: true, reason: null, cancelled: false, computeTimeMs: 1, finished: new Date().toISOString() }, metadata: metadata() }], 'stream_exists');
    for (let i = 0; i < 200 && !sink.sent.some((s) => s.event === 'job-finished-2'); i++) await sleep(10);
    expect(sink.sent.map((s) => (s.event === 'job-data-2' ? s.payload.data : s.event))).toEqual(['before\n', ...texts, 'job-finished-2']);
    expect(follower.active).toBe(false);
    expect(feed.followed().size).toBe(0);
    await feed.close();
  });

  it("refuses another project's job and an unknown one alike, without following them", async () => {
    const feed = new JobLogFeed(inner, log, { idleStopMs: 1000, retryDelayMs: 20 });
    await inner.appendToStream(jobStream(3), [requested(3, 8), output(3, 'private\n')], 'no_stream');
    const sink = new RecordingSink();
    const deps = { events: inner, feed, log, limits: { pageSize: 2, highWaterBytes: 1024 } };
    expect(await new JobFollower(3, 0, sink, deps).start(9)).toBe('not-found');
    expect(await new JobFollower(4, 0, sink, deps).start(9)).toBe('not-found');
    expect(sink.sent).toEqual([]);
    expect(feed.followed().size).toBe(0);
    await feed.close();
  });
});

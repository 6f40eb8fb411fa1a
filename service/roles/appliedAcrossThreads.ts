// THREAD_ROLES: the thread of the projections tells the serving thread how far the read models go
// that it has committed, as a process keeping them to itself knows at once. Without it the serving
// thread reads the projections' stored checkpoints, and those of projections an event does not
// concern are stored only every CHECKPOINT_FLUSH_MS: a management write waited about 130 ms to be
// read back, where one process answers in 4-6 ms.
import path from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import type { Position } from '../../stores/eventstore/eventStore';
import type { ReadStore } from '../../stores/readstore/readStore';

const channelName = (dataDir: string) => `edge-ml-read-models-applied:${path.resolve(dataDir)}`;

/** Where the store's writes show at once (no commit to wait for), how often the position is told. */
const UNCOMMITTED_EVERY_MS = 5;
/** While the serving thread waits for a position, how often the projections' thread looks whether it has applied it. */
const WANTED_EVERY_MS = 1;
/** How long it looks: past it (a projection stuck before the position), the wait ends on its own timeout. */
const WANTED_FOR_MS = 30_000;

/** What the serving thread asks: the read models up to `want`, committed now rather than at the group window's end. */
interface Wanted {
  want: Position;
}
const isWanted = (data: unknown): data is Wanted => typeof data === 'object' && data !== null && typeof (data as Wanted).want === 'bigint';

/**
 * On the projections' thread: after each commit of the read store, the position every healthy
 * projection has applied (all of it committed by then); where writes show as they are made, every
 * few milliseconds. A position the serving thread waits for is committed once applied, without
 * waiting for the group window's end (its 20 ms keep the commits few under a device's load, when
 * nobody waits). Answers the call that stops.
 */
export function announceApplied(runner: { readonly appliedPosition: Position | undefined }, readStore: ReadStore, dataDir: string): () => void {
  const channel = new BroadcastChannel(channelName(dataDir));
  channel.unref();
  let wanted: Position | undefined;
  let looking: NodeJS.Timeout | undefined;
  let lookingSince = 0;
  const stopLooking = () => {
    wanted = undefined;
    clearInterval(looking);
    looking = undefined;
  };
  const commitIfApplied = () => {
    const applied = runner.appliedPosition;
    if (wanted === undefined) return;
    if (applied === undefined || applied < wanted) {
      if (looking && Date.now() - lookingSince > WANTED_FOR_MS) stopLooking();
      return;
    }
    stopLooking();
    try {
      readStore.commitGroup?.();
    } catch {
      // Reported by the store; the wait goes on until the next commit, or its timeout.
    }
  };
  channel.onmessage = (message: unknown) => {
    const data = (message as { data?: unknown }).data;
    if (!isWanted(data)) return;
    if (wanted === undefined || data.want > wanted) wanted = data.want;
    commitIfApplied();
    if (wanted !== undefined && !looking) {
      lookingSince = Date.now();
      looking = setInterval(commitIfApplied, WANTED_EVERY_MS);
      looking.unref();
    }
  };
  let told: Position | undefined;
  const tell = () => {
    const position = runner.appliedPosition;
    if (position === undefined || (told !== undefined && position <= told)) return;
    told = position;
    channel.postMessage(position);
  };
  let stopTelling: () => void;
  if (readStore.onCommitted) stopTelling = readStore.onCommitted(tell);
  else {
    const timer = setInterval(tell, UNCOMMITTED_EVERY_MS);
    timer.unref();
    stopTelling = () => clearInterval(timer);
  }
  return () => {
    stopLooking();
    stopTelling();
    channel.close();
  };
}

/** On the serving thread: the furthest position the projections' thread has said its read models show. */
export class AppliedElsewhere {
  private latest: Position | undefined;
  private readonly listeners = new Set<() => void>();
  private readonly channel: BroadcastChannel;

  constructor(dataDir: string) {
    this.channel = new BroadcastChannel(channelName(dataDir));
    this.channel.unref();
    this.channel.onmessage = (message: unknown) => {
      const position = (message as { data?: unknown }).data;
      if (typeof position !== 'bigint' || (this.latest !== undefined && position <= this.latest)) return;
      this.latest = position;
      for (const listener of [...this.listeners]) listener();
    };
  }

  position(): Position | undefined {
    return this.latest;
  }

  /** Asks the projections' thread to commit up to `position` as soon as it has applied it. */
  want(position: Position): void {
    this.channel.postMessage({ want: position } satisfies Wanted);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.channel.close();
  }
}

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { AppendResult, EventStore, ExpectedRevision, NewEvent, Position, ReadAllOptions, ReadStreamOptions, StoredEvent, SubscribeOptions, Subscription } from '../eventstore/eventStore';
import type { ChainLink } from '../eventstore/eventChain';
import type { KeyStore } from './keyStore';

export interface SealedFieldsSpec {
  subject(data: Record<string, unknown>): string;
  fields: readonly string[];
}

const PREFIX = 'sealed:v1:';

/**
 * The subject's key is gone, yet the log holds data sealed with it, and it was not destroyed on purpose:
 * the key store lost it (a lost keys.sqlite-wal, a restore). A new key would make that data unreadable
 * for good, so none is made: its owner's writes of personal data fail until the key store is restored.
 */
export class SealingKeyLostError extends Error {
  readonly code = 'SEALING_KEY_LOST';
  constructor(readonly subject: string) {
    super(`The sealing key of ${subject} is missing from the key store, though the log holds data sealed with it: no new key is made for it. Restore the key store (keys.sqlite, or the _keys database) from a backup; see docs/recovery.md`);
    this.name = 'SealingKeyLostError';
  }
}

/** How long a key read from the key store is used without reading it again (see keyCache). */
export const KEY_CACHE_MS = 5_000;
const KEY_CACHE_ENTRIES = 10_000;

/**
 * An event store decorator that seals the declared fields of each event (AES-256-GCM with the
 * subject's key) before they reach the log, and opens them when events are read. A field whose key
 * was destroyed reads as null. Nothing above the port sees sealed values.
 */
export class SealingEventStore implements EventStore {
  /**
   * Keys read lately, each for `keyCacheMs`: another process (a split deployment) may destroy one,
   * and a forgotten subject must read as forgotten here too within that time, not until a restart.
   */
  private readonly keyCache = new Map<string, { key: Buffer; until: number }>();
  private readonly inFlight = new Map<string, Promise<Buffer | undefined>>();

  /** Subjects whose key was found not to open their sealed fields, reported once each. */
  private readonly unreadable = new Set<string>();

  constructor(
    private readonly inner: EventStore,
    private readonly keys: KeyStore,
    private readonly specs: Readonly<Record<string, SealedFieldsSpec>>,
    /** Told once per subject whose key opens none of its sealed fields (see open). */
    private readonly onUnreadable: (subject: string, event: StoredEvent) => void = () => {},
    /** Told when a key is refused for a subject whose key was lost (SealingKeyLostError). */
    private readonly onKeyLost: (subject: string) => void = () => {},
    private readonly keyCacheMs = KEY_CACHE_MS,
  ) {}

  private cachedKey(subject: string): Buffer | undefined {
    const entry = this.keyCache.get(subject);
    if (!entry) return undefined;
    if (entry.until > Date.now()) return entry.key;
    this.keyCache.delete(subject);
    return undefined;
  }

  private cacheKey(subject: string, key: Buffer): void {
    this.keyCache.delete(subject);
    // Oldest first (insertion order): a replay over many subjects keeps a bounded set.
    if (this.keyCache.size >= KEY_CACHE_ENTRIES) this.keyCache.delete(this.keyCache.keys().next().value!);
    this.keyCache.set(subject, { key, until: Date.now() + this.keyCacheMs });
  }

  async appendToStream(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const sealed = await Promise.all(events.map((e) => this.seal(e)));
    return this.inner.appendToStream(streamId, sealed, expected);
  }

  async readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]> {
    const events = await this.inner.readStream(streamId, options);
    return Promise.all(events.map((e) => this.open(e)));
  }

  async *readAll(options?: ReadAllOptions): AsyncIterable<StoredEvent> {
    for await (const event of this.inner.readAll(options)) yield this.specs[event.type] ? await this.open(event) : event;
  }

  subscribeToAll(options?: SubscribeOptions): Subscription {
    const inner = this.inner.subscribeToAll(options);
    const specs = this.specs;
    const open = (e: StoredEvent) => this.open(e);
    return {
      close: () => inner.close(),
      async *[Symbol.asyncIterator]() {
        // Most events (every sample) seal nothing: passed on without a wait.
        for await (const event of inner) yield specs[event.type] ? await open(event) : event;
      },
    };
  }

  /** As stored: the chain covers sealed fields sealed, so shredding a key never breaks it. */
  readChain(options?: ReadAllOptions): AsyncIterable<readonly ChainLink[]> {
    return this.inner.readChain(options);
  }

  headPosition(): Promise<Position | undefined> {
    return this.inner.headPosition();
  }

  identity(): Promise<string> {
    return this.inner.identity();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Whether the event's sealed fields read as null because their subject was forgotten. */
  async isForgotten(event: StoredEvent): Promise<boolean> {
    const spec = this.specs[event.type];
    if (!spec) return false;
    const sealedOnce = spec.fields.some((f) => event.data[f] === null);
    return sealedOnce && (await this.key(spec.subject(event.data), false)) === undefined;
  }

  /** Forgets a subject: its sealed fields read as null from now on, in every replay. */
  async destroySubject(subject: string): Promise<void> {
    this.keyCache.delete(subject);
    await this.keys.destroy(subject);
  }

  private async seal<E extends NewEvent>(event: E): Promise<E> {
    const spec = this.specs[event.type];
    if (!spec) return event;
    const subject = spec.subject(event.data);
    if (this.cachedKey(subject) === undefined && (await this.keys.get(subject)) === undefined) await this.assertMayMakeKey(subject);
    const key = await this.key(subject, true);
    const data: Record<string, unknown> = { ...event.data };
    for (const field of spec.fields) {
      if (data[field] === undefined || data[field] === null) continue;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key!, iv);
      const body = Buffer.concat([cipher.update(JSON.stringify(data[field]), 'utf8'), cipher.final()]);
      data[field] = PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
    }
    return { ...event, data };
  }

  /**
   * A key may be made for a subject that never had one, or whose key was destroyed on purpose; not
   * for one whose stream (a subject is named as its stream: user-42, project-7) holds sealed data.
   */
  private async assertMayMakeKey(subject: string): Promise<void> {
    if (await this.keys.wasDestroyed(subject)) return;
    const events = await this.inner.readStream(subject);
    const sealed = events.some((e) => this.specs[e.type]?.fields.some((f) => typeof e.data[f] === 'string' && (e.data[f] as string).startsWith(PREFIX)));
    if (sealed) {
      this.onKeyLost(subject);
      throw new SealingKeyLostError(subject);
    }
  }

  /** A subject read without its key, not destroyed on purpose: its key was lost; said once per subject. */
  private async reportIfLost(subject: string): Promise<void> {
    if (this.unreadable.has(subject)) return;
    this.unreadable.add(subject);
    if (!(await this.keys.wasDestroyed(subject))) this.onKeyLost(subject);
  }

  private async open(event: StoredEvent): Promise<StoredEvent> {
    const spec = this.specs[event.type];
    if (!spec) return event;
    const key = await this.key(spec.subject(event.data), false);
    const data: Record<string, unknown> = { ...event.data };
    for (const field of spec.fields) {
      const value = data[field];
      if (typeof value !== 'string' || !value.startsWith(PREFIX)) continue;
      if (!key) {
        data[field] = null;
        await this.reportIfLost(spec.subject(event.data));
        continue;
      }
      try {
        const raw = Buffer.from(value.slice(PREFIX.length), 'base64');
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        data[field] = JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'));
      } catch {
        // Sealed with a key that is gone (a key store that lost it made a new one): as unreadable as a
        // forgotten subject's, and read so, rather than stopping every read model at this event.
        data[field] = null;
        const subject = spec.subject(event.data);
        if (!this.unreadable.has(subject)) {
          this.unreadable.add(subject);
          this.onUnreadable(subject, event);
        }
      }
    }
    return { ...event, data };
  }

  private key(subject: string, create: boolean): Promise<Buffer | undefined> {
    const cached = this.cachedKey(subject);
    if (cached) return Promise.resolve(cached);
    // Events of one batch share a subject: one lookup serves them all.
    const flight = `${create}:${subject}`;
    let pending = this.inFlight.get(flight);
    if (!pending) {
      pending = (create ? this.keys.getOrCreate(subject) : this.keys.get(subject))
        .then((key) => {
          if (key) this.cacheKey(subject, key);
          return key;
        })
        .finally(() => this.inFlight.delete(flight));
      this.inFlight.set(flight, pending);
    }
    return pending;
  }
}

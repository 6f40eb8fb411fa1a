import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { AppendResult, EventStore, ExpectedRevision, NewEvent, Position, ReadAllOptions, ReadStreamOptions, StoredEvent, Subscription } from '../eventstore/eventStore';
import type { ChainLink } from '../eventstore/eventChain';
import type { KeyStore } from './keyStore';

export interface SealedFieldsSpec {
  subject(data: Record<string, unknown>): string;
  fields: readonly string[];
}

const PREFIX = 'sealed:v1:';

/**
 * An event store decorator that seals the declared fields of each event (AES-256-GCM with the
 * subject's key) before they reach the log, and opens them when events are read. A field whose key
 * was destroyed reads as null. Nothing above the port sees sealed values.
 */
export class SealingEventStore implements EventStore {
  private readonly keyCache = new Map<string, Buffer>();
  private readonly inFlight = new Map<string, Promise<Buffer | undefined>>();

  constructor(
    private readonly inner: EventStore,
    private readonly keys: KeyStore,
    private readonly specs: Readonly<Record<string, SealedFieldsSpec>>,
  ) {}

  async appendToStream(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const sealed = await Promise.all(events.map((e) => this.seal(e)));
    return this.inner.appendToStream(streamId, sealed, expected);
  }

  async readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]> {
    const events = await this.inner.readStream(streamId, options);
    return Promise.all(events.map((e) => this.open(e)));
  }

  async *readAll(options?: ReadAllOptions): AsyncIterable<StoredEvent> {
    for await (const event of this.inner.readAll(options)) yield await this.open(event);
  }

  subscribeToAll(options?: { after?: Position }): Subscription {
    const inner = this.inner.subscribeToAll(options);
    const open = (e: StoredEvent) => this.open(e);
    return {
      close: () => inner.close(),
      async *[Symbol.asyncIterator]() {
        for await (const event of inner) yield await open(event);
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
    const key = await this.key(spec.subject(event.data), true);
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
        continue;
      }
      const raw = Buffer.from(value.slice(PREFIX.length), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      data[field] = JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'));
    }
    return { ...event, data };
  }

  private key(subject: string, create: boolean): Promise<Buffer | undefined> {
    const cached = this.keyCache.get(subject);
    if (cached) return Promise.resolve(cached);
    // Events of one batch share a subject: one lookup serves them all.
    const flight = `${create}:${subject}`;
    let pending = this.inFlight.get(flight);
    if (!pending) {
      pending = (create ? this.keys.getOrCreate(subject) : this.keys.get(subject))
        .then((key) => {
          if (key) this.keyCache.set(subject, key);
          return key;
        })
        .finally(() => this.inFlight.delete(flight));
      this.inFlight.set(flight, pending);
    }
    return pending;
  }
}

// What the subscription knows of its subscribers' failures: the one each is stuck on now, how it is
// reported (logs, `failures()`, /health), and the record kept in the read store for other processes,
// including failures an earlier run stored, cleared once the subscriber gets past their event.
import type { Logger } from 'pino';
import type { Position, StoredEvent } from '../stores/eventstore/eventStore';

/** A subscriber stuck on one event, as reported (projection_status, /health, logs). */
export interface SubscriberFailure {
  name: string;
  /** The event's position in decimal (positions are 64-bit). */
  position: string;
  eventType: string;
  streamId: string;
  eventId: string;
  error: string;
  since: string;
  attempts: number;
  /** When it is tried again; null once the subscription stopped. */
  nextAttempt: string | null;
}

/** Where failures are kept for other processes; the in-memory state stays the authority here. */
export interface FailureRecord {
  load(): Promise<{ name: string; position: Position }[]>;
  store(failure: SubscriberFailure): Promise<void>;
  clear(name: string): Promise<void>;
}

interface Failure {
  event: StoredEvent;
  error: string;
  since: Date;
  attempts: number;
  nextAttempt: Date | null;
}

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * The failures of one subscription's subscribers, by name. Writes to the FailureRecord go through
 * `enqueue`, the subscription's queue of checkpoint writes, so they are stored in order.
 */
export class SubscriberFailures {
  private readonly current = new Map<string, Failure>();
  /** Failures stored by an earlier run: reported there until this run gets past their event. */
  private readonly stale = new Map<string, Position>();

  constructor(
    private readonly kind: string,
    private readonly log: Logger,
    private readonly enqueue: (write: () => Promise<void>) => void,
    private readonly record: FailureRecord | undefined,
  ) {}

  async loadStored(): Promise<void> {
    for (const failure of (await this.record?.load()) ?? []) this.stale.set(failure.name, failure.position);
  }

  has(name: string): boolean {
    return this.current.has(name);
  }

  /** The event `name` is stuck on, if it is. */
  eventOf(name: string): StoredEvent | undefined {
    return this.current.get(name)?.event;
  }

  list(): SubscriberFailure[] {
    return [...this.current].map(([name, failure]) => describe(name, failure));
  }

  /** `name` failed on `event`: logged at error level once per event, the retries at debug level. */
  failed(name: string, event: StoredEvent, error: unknown): void {
    const failure = this.current.get(name);
    if (failure && failure.event.position === event.position) {
      failure.attempts += 1;
      failure.error = messageOf(error);
      this.log.debug({ [this.kind]: name, position: event.position.toString(), attempts: failure.attempts, err: error }, `${this.kind} failed again on the same event`);
      return;
    }
    this.current.set(name, { event, error: messageOf(error), since: new Date(), attempts: 1, nextAttempt: null });
    this.log.error(
      { [this.kind]: name, position: event.position.toString(), eventType: event.type, streamId: event.streamId, eventId: event.id, err: error },
      `${this.kind} ${name} failed on event ${event.position} (${event.type} in ${event.streamId}); it is stalled there and retried with backoff, the others go on`,
    );
  }

  /** `name` has applied `position`: a failure at or before it is over, here and in the record. */
  passed(name: string, position: Position): void {
    const failure = this.current.get(name);
    if (failure && position >= failure.event.position) {
      this.current.delete(name);
      this.log.warn({ [this.kind]: name, position: failure.event.position.toString(), attempts: failure.attempts }, `${this.kind} ${name} got past event ${failure.event.position}; it catches up`);
      this.forget(name);
    }
    const stale = this.stale.get(name);
    if (stale !== undefined && position >= stale) {
      this.stale.delete(name);
      if (!this.current.has(name)) this.forget(name);
    }
  }

  /** Stores the failure with when it is tried next (null: not again in this run). */
  scheduled(name: string, nextAttempt: Date | null): void {
    const failure = this.current.get(name);
    if (!failure) return;
    failure.nextAttempt = nextAttempt;
    const record = this.record;
    if (!record) return;
    const described = describe(name, failure);
    this.statusWrite(() => record.store(described));
  }

  private forget(name: string): void {
    const record = this.record;
    if (record) this.statusWrite(() => record.clear(name));
  }

  /** A failed status write is logged; the next change of the failure writes it again. */
  private statusWrite(write: () => Promise<void>): void {
    this.enqueue(() => write().catch((error: unknown) => this.log.error({ err: error }, `storing the ${this.kind}s' status failed`)));
  }
}

function describe(name: string, failure: Failure): SubscriberFailure {
  const { event } = failure;
  return {
    name,
    position: event.position.toString(),
    eventType: event.type,
    streamId: event.streamId,
    eventId: event.id,
    error: failure.error,
    since: failure.since.toISOString(),
    attempts: failure.attempts,
    nextAttempt: failure.nextAttempt?.toISOString() ?? null,
  };
}

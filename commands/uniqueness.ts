import { createHash, createHmac, randomUUID } from 'node:crypto';
import { ConflictError } from '../domain/shared/errors';
import { WrongExpectedRevisionError, type EventStore, type StoredEvent } from '../stores/eventstore/eventStore';
import type { KeyStore } from '../stores/keystore/keyStore';
import { eventMetadata, type CommandContext } from './commandContext';

const normalized = (value: string): string => value.trim().toLowerCase();

/**
 * Values that must be unique across aggregates (usernames, e-mails) are reserved with a stream per
 * value, appended with "must not exist". The stream name holds a hash, never the value itself.
 */
export const reservationStream = (kind: string, value: string): string => `unique-${kind}-${createHash('sha256').update(normalized(value)).digest('hex')}`;

/**
 * Kinds whose values are personal data sealed in the events (an e-mail address): a plain hash in a
 * stream name would stay in the log after the user is forgotten, and confirm a guessed address to
 * anyone who reads the log. Their streams are named by an HMAC under the installation's key instead.
 */
const PERSONAL_KINDS: ReadonlySet<string> = new Set(['email']);

/** The key subject of the installation's reservation key: not a user's (`user-<id>`), never destroyed. */
export const RESERVATION_KEY_SUBJECT = 'installation:reservations';

export const keyedReservationStream = (kind: string, value: string, key: Buffer): string =>
  `unique-${kind}-hmac-${createHmac('sha256', key).update(normalized(value)).digest('hex')}`;

/**
 * A reservation whose owner stream never came to exist (the process died between the two
 * appends) is abandoned after this long and may be taken over.
 */
const ABANDONED_AFTER_MS = 60_000;

export class UniquenessReservations {
  private key: Promise<Buffer> | undefined;

  constructor(
    private readonly store: EventStore,
    private readonly keys: KeyStore,
  ) {}

  /** The stream that reserves the value now, and for personal kinds the unkeyed one that older logs reserved it with. */
  private async streams(kind: string, value: string): Promise<{ stream: string; before?: string }> {
    if (!PERSONAL_KINDS.has(kind)) return { stream: reservationStream(kind, value) };
    // A failed read of the key is not kept: the next reservation asks again.
    this.key ??= this.keys.getOrCreate(RESERVATION_KEY_SUBJECT).catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return { stream: keyedReservationStream(kind, value, await this.key), before: reservationStream(kind, value) };
  }

  private async last(stream: string): Promise<StoredEvent | undefined> {
    return (await this.store.readStream(stream)).at(-1);
  }

  /** Whether a reservation by someone else may be taken over: its owner stream never came to exist within a minute. */
  private async abandoned(last: StoredEvent, ctx: CommandContext): Promise<boolean> {
    return Date.parse(last.metadata.time) < ctx.now.getTime() - ABANDONED_AFTER_MS && (await this.store.readStream(String(last.data.owner))).length === 0;
  }

  /**
   * Reserves `value` for `ownerStream`; throws ConflictError with `message` when someone else
   * holds it. Reserving again for the same owner is a no-op.
   */
  async reserve(kind: string, value: string, ownerStream: string, ctx: CommandContext, message: string): Promise<void> {
    const { stream, before } = await this.streams(kind, value);
    if (before) {
      // Held in a log written before keyed names: still held.
      const earlier = await this.last(before);
      if (earlier?.type === 'ValueReserved') {
        if (earlier.data.owner === ownerStream) return;
        if (!(await this.abandoned(earlier, ctx))) throw new ConflictError(message);
        // Taken over: released there, or it would still read as held (isReserved).
        try {
          await this.store.appendToStream(before, [{ id: randomUUID(), type: 'ValueReleased', data: { kind, owner: earlier.data.owner }, metadata: eventMetadata(ctx) }], earlier.revision);
        } catch (error) {
          if (error instanceof WrongExpectedRevisionError) throw new ConflictError(message);
          throw error;
        }
      }
    }
    const event = (type: string) => ({ id: randomUUID(), type, data: { kind, owner: ownerStream }, metadata: eventMetadata(ctx) });
    try {
      await this.store.appendToStream(stream, [event('ValueReserved')], 'no_stream');
      return;
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
    }
    const last = (await this.last(stream))!;
    if (last.type === 'ValueReserved' && last.data.owner === ownerStream) return;
    const free = last.type === 'ValueReleased' || (await this.abandoned(last, ctx));
    if (!free) throw new ConflictError(message);
    try {
      await this.store.appendToStream(stream, [event('ValueReserved')], last.revision);
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) throw new ConflictError(message);
      throw error;
    }
  }

  /** Reserves the value if nobody holds it; answers whether this owner now holds it. */
  async tryReserve(kind: string, value: string, ownerStream: string, ctx: CommandContext): Promise<boolean> {
    try {
      await this.reserve(kind, value, ownerStream, ctx, 'taken');
      return true;
    } catch (error) {
      if (error instanceof ConflictError) return false;
      throw error;
    }
  }

  /** Whether someone holds the value now: a read, so a refused request can be refused before it appends anything. */
  async isReserved(kind: string, value: string): Promise<boolean> {
    const { stream, before } = await this.streams(kind, value);
    if (before && (await this.last(before))?.type === 'ValueReserved') return true;
    return (await this.last(stream))?.type === 'ValueReserved';
  }

  async release(kind: string, value: string, ownerStream: string, ctx: CommandContext): Promise<void> {
    const { stream, before } = await this.streams(kind, value);
    for (const held of before ? [before, stream] : [stream]) {
      const last = await this.last(held);
      if (!last || last.type !== 'ValueReserved' || last.data.owner !== ownerStream) continue;
      await this.store.appendToStream(
        held,
        [{ id: randomUUID(), type: 'ValueReleased', data: { kind, owner: ownerStream }, metadata: eventMetadata(ctx) }],
        last.revision,
      );
    }
  }
}

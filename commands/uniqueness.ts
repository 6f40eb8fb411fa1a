import { createHash, randomUUID } from 'node:crypto';
import { ConflictError } from '../domain/shared/errors';
import { WrongExpectedRevisionError, type EventStore } from '../stores/eventstore/eventStore';
import { eventMetadata, type CommandContext } from './commandContext';

/**
 * Values that must be unique across aggregates (usernames, e-mails) are reserved with a stream per
 * value, appended with "must not exist". The stream name holds a hash, never the value itself.
 */
export const reservationStream = (kind: string, value: string): string =>
  `unique-${kind}-${createHash('sha256').update(value.trim().toLowerCase()).digest('hex')}`;

/**
 * A reservation whose owner stream never came to exist (the process died between the two
 * appends) is abandoned after this long and may be taken over.
 */
const ABANDONED_AFTER_MS = 60_000;

export class UniquenessReservations {
  constructor(private readonly store: EventStore) {}

  /**
   * Reserves `value` for `ownerStream`; throws ConflictError with `message` when someone else
   * holds it. Reserving again for the same owner is a no-op.
   */
  async reserve(kind: string, value: string, ownerStream: string, ctx: CommandContext, message: string): Promise<void> {
    const stream = reservationStream(kind, value);
    const event = (type: string) => ({ id: randomUUID(), type, data: { kind, owner: ownerStream }, metadata: eventMetadata(ctx) });
    try {
      await this.store.appendToStream(stream, [event('ValueReserved')], 'no_stream');
      return;
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
    }
    const history = await this.store.readStream(stream);
    const last = history.at(-1)!;
    if (last.type === 'ValueReserved' && last.data.owner === ownerStream) return;
    const free =
      last.type === 'ValueReleased' ||
      (Date.parse(last.metadata.time) < ctx.now.getTime() - ABANDONED_AFTER_MS &&
        (await this.store.readStream(String(last.data.owner))).length === 0);
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
    return (await this.store.readStream(reservationStream(kind, value))).at(-1)?.type === 'ValueReserved';
  }

  async release(kind: string, value: string, ownerStream: string, ctx: CommandContext): Promise<void> {
    const stream = reservationStream(kind, value);
    const last = (await this.store.readStream(stream)).at(-1);
    if (!last || last.type !== 'ValueReserved' || last.data.owner !== ownerStream) return;
    await this.store.appendToStream(
      stream,
      [{ id: randomUUID(), type: 'ValueReleased', data: { kind, owner: ownerStream }, metadata: eventMetadata(ctx) }],
      last.revision,
    );
  }
}

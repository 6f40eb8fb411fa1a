import { createHash, randomUUID } from 'node:crypto';
import { v7 as timeOrderedUuid } from 'uuid';
import type { EventMetadata } from '../stores/eventstore/eventStore';

/** Who is asking and why: becomes the metadata of every event the command appends. */
export interface CommandContext {
  /** `user:<id>`, `apikey:<id>` or `system:<component>`. */
  actor: string;
  /** The HTTP request id, or the saga run. */
  correlationId: string;
  /** The event or command that caused this command. */
  causationId?: string;
  /**
   * Set by sagas: event ids are then derived from it, so a command sent again after a restart
   * appends the same ids and the store keeps it once.
   */
  commandId?: string;
  now: Date;
}

export function systemContext(component: string, now = new Date()): CommandContext {
  return { actor: `system:${component}`, correlationId: randomUUID(), now };
}

export function eventMetadata(ctx: CommandContext): EventMetadata {
  return {
    actor: ctx.actor,
    correlationId: ctx.correlationId,
    ...(ctx.causationId === undefined ? {} : { causationId: ctx.causationId }),
    time: ctx.now.toISOString(),
  };
}

/**
 * A new event's id: time-ordered (UUID v7), so that the log's unique index of ids takes each append
 * near its last page instead of a random one (fewer pages written a commit); or, for a saga's
 * command, a UUID (v4 layout) derived from the command id and the event's place in the batch.
 */
export function eventId(ctx: CommandContext, index: number): string {
  if (ctx.commandId === undefined) return timeOrderedUuid();
  const h = createHash('sha256').update(`${ctx.commandId}#${index}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x40;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

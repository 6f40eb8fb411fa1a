import type { DomainEvent } from '../domain/shared/decider';
import type { StoredEvent } from '../stores/eventstore/eventStore';
import type { Collection, Document, ReadStore, Update } from '../stores/readstore/readStore';
import { checkpointName } from './readModelVersions';

/**
 * A set of event handlers that maintain read models. Handlers must be idempotent: delivery is
 * at least once (a crash between a handler and its checkpoint replays the event).
 */
export interface Projection {
  name: string;
  /** The checkpoint it keeps in the read store: its name, with its version (see readModelVersions). */
  checkpoint: string;
  handles: ReadonlySet<string>;
  /**
   * The collections its handlers write, and no other projection does: each projection is its own
   * unit of failure, checkpoint and rebuild. It may read other collections, never write them.
   */
  writes: ReadonlySet<string>;
  apply(event: StoredEvent, store: ReadStore): Promise<void>;
}

type Handlers<E extends DomainEvent> = {
  [K in E['type']]?: (event: StoredEvent<K, Extract<E, { type: K }>['data']>, store: ReadStore) => Promise<void>;
};

export function defineProjection<E extends DomainEvent>(name: string, writes: readonly string[], handlers: Handlers<E>): Projection {
  const table = handlers as Record<string, ((event: StoredEvent, store: ReadStore) => Promise<void>) | undefined>;
  return {
    name,
    checkpoint: checkpointName(name),
    handles: new Set(Object.keys(handlers)),
    writes: new Set(writes),
    // The handler's own promise, not one more around it: this runs for every event handled.
    apply: (event, store) => table[event.type]?.(event, store) ?? Promise.resolve(),
  };
}

/**
 * Documents remember the log position of the last event applied to them. Positions are stored as
 * fixed-width decimal strings so that `$lt` compares them correctly in MongoDB and mingo alike.
 */
export function positionKey(position: bigint): string {
  // Asked several times per event (each document a handler guards): the last one is kept.
  if (position !== lastPosition) {
    lastKey = position.toString().padStart(20, '0');
    lastPosition = position;
  }
  return lastKey;
}
let lastPosition: bigint | undefined;
let lastKey = '';

/** Creates the document once: a replayed creation matches the existing one and changes nothing. */
export async function insertOnce<T extends Document>(
  collection: Collection<T>,
  doc: T,
  event: StoredEvent,
): Promise<void> {
  const { _id, ...fields } = doc;
  await collection.updateOne({ _id }, { $setOnInsert: { ...fields, _position: positionKey(event.position) } }, { upsert: true });
}

/** Applies the update once: a document already at or past this event's position is left alone. */
export async function updateOnce<T extends Document>(
  collection: Collection<T>,
  _id: T['_id'],
  update: Update,
  event: StoredEvent,
): Promise<void> {
  const position = positionKey(event.position);
  await collection.updateOne({ _id, _position: { $lt: position } }, { ...update, $set: { ...update.$set, _position: position } });
}

/**
 * Free-form maps from clients (sample metadata, project metadata) have keys that MongoDB, and
 * FerretDB which CI runs on, refuse as field names: with a `.`, a leading `$`, empty, or with NUL.
 * They are stored escaped (`%` and two hex digits; the empty key as `%`), at every depth, and
 * `readableKeys` gives them back as sent. Other keys are stored as they are.
 */
export function storableKeys<T>(value: T): T {
  return mapKeys(value, (key) => (key === '' ? '%' : key.replace(/[%.\u0000]|^\$/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)));
}

export function readableKeys<T>(value: T): T {
  return mapKeys(value, (key) => (key === '%' ? '' : key.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))));
}

function mapKeys<T>(value: T, rename: (key: string) => string): T {
  if (Array.isArray(value)) return value.map((v: unknown) => mapKeys(v, rename)) as T;
  if (value === null || typeof value !== 'object') return value;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [rename(k), mapKeys(v, rename)])) as T;
}

// The tamper-evident log. Every event is stored with a hash chained to the previous event of its
// stream, and a running hash over the whole log (in position order) is recorded now and then by a
// checkpoint event. A change to any stored byte, a missing or reordered event of a stream, or a
// missing tail of the log then shows when the log is walked again (`verifyLog`).
//
// Hashes cover the event as stored: personal data sealed by SealingEventStore is hashed in its
// sealed form, so destroying a subject's key (crypto-shredding) never breaks the chain.

import { createHash, hash } from 'node:crypto';
import type { Position, Revision } from './eventStore';

/** The "previous hash" of a stream's first event. */
export const GENESIS_HASH = '';

/** An event as the log stores it: data and metadata as the JSON texts that were written. */
export interface ChainLink {
  streamId: string;
  revision: Revision;
  position: Position;
  id: string;
  type: string;
  /** JSON.stringify of the data as appended (sealed fields sealed). */
  data: string;
  /** JSON.stringify of the metadata as appended, without the hash. */
  metadata: string;
  /** The stored chain hash; undefined when the store holds none for this event. */
  hash: string | undefined;
}

/**
 * SHA-256 (hex) over the previous hash and the event's stored fields, each preceded by its length,
 * so no choice of values can make two different events hash the same input (and the texts go in
 * as they are, without the cost of escaping them again).
 */
export function chainHash(previous: string, link: Omit<ChainLink, 'position' | 'hash'>): string {
  const fields = [previous, link.streamId, link.revision.toString(), link.id, link.type, link.data, link.metadata];
  let input = '';
  for (const field of fields) input += `${field.length}:${field}`;
  // The one-shot hash: a verify of the whole log spends most of its time here.
  return hash('sha256', input, 'hex');
}

/** The running hash of the whole log: each event's chain hash folded in, in position order. */
export function foldLogHash(logHash: string, eventHash: string): string {
  return hash('sha256', `${logHash}\n${eventHash}`, 'hex');
}

export const EMPTY_LOG_HASH = createHash('sha256').update('edge-ml log').digest('hex');

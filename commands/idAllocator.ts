import { randomUUID } from 'node:crypto';
import { WrongExpectedRevisionError, type EventStore, type Revision } from '../stores/eventstore/eventStore';

export const idBlockStream = (sequence: string): string => `idblocks-${sequence}`;

interface Block {
  next: number;
  last: number;
}

/**
 * Hi/lo integer ids. A process reserves a block of ids with one append to the sequence's stream
 * (expected revision = the last it saw, so two processes never get the same block) and hands them
 * out from memory. Ids left in a block when a process stops are never used: gaps, never duplicates.
 */
export class IdAllocator {
  private readonly blocks = new Map<string, Block>();
  private readonly pending = new Map<string, Promise<void>>();
  private readonly seen = new Map<string, { revision: Revision; last: number }>();

  constructor(
    private readonly store: EventStore,
    private readonly blockSize = 20,
  ) {}

  async next(sequence: string): Promise<number> {
    for (;;) {
      const block = this.blocks.get(sequence);
      if (block && block.next <= block.last) return block.next++;
      // One reservation at a time per sequence; callers waiting on it then share the new block.
      let reserving = this.pending.get(sequence);
      if (!reserving) {
        reserving = this.reserve(sequence).finally(() => this.pending.delete(sequence));
        this.pending.set(sequence, reserving);
      }
      await reserving;
    }
  }

  private async reserve(sequence: string): Promise<void> {
    const stream = idBlockStream(sequence);
    for (;;) {
      const known = this.seen.get(sequence);
      const events = await this.store.readStream(stream, known ? { fromRevision: known.revision + 1n } : undefined);
      let revision = known?.revision;
      let last = known?.last ?? 0;
      for (const e of events) {
        revision = e.revision;
        last = Number(e.data.last);
      }
      const from = last + 1;
      const to = last + this.blockSize;
      try {
        const result = await this.store.appendToStream(
          stream,
          [{ id: randomUUID(), type: 'IdBlockReserved', data: { sequence, first: from, last: to }, metadata: { actor: 'system:ids', correlationId: randomUUID(), time: new Date().toISOString() } }],
          revision ?? 'no_stream',
        );
        this.seen.set(sequence, { revision: result.nextExpectedRevision, last: to });
        this.blocks.set(sequence, { next: from, last: to });
        return;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        if (revision !== undefined) this.seen.set(sequence, { revision, last });
      }
    }
  }
}

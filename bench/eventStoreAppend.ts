// Appends through the event store port (SqliteEventStore) against the ceiling of raw
// better-sqlite3 inserts into the same table with the same durability (WAL, synchronous=FULL,
// one transaction per append), measured in the same run on the same disk. The ratio is what the
// port costs on top of the fsync that dominates both.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { EventMetadata, NewEvent } from '../stores/eventstore/eventStore';
import { EVENTS_SCHEMA, SqliteEventStore } from '../stores/eventstore/sqliteEventStore';
import type { BenchResult } from './benchResult';

/** Raw and port take turns, so drift in the disk's speed over the run hits both alike. */
const ROUNDS = 20;
const ROUND_MS = 150;
const WARMUP_MS = 200;

interface Rate {
  events: number;
  appends: number;
  seconds: number;
}

/** Appends one batch of `size` events to a new stream. */
type AppendOnce = (size: number) => Promise<void> | void;

export async function benchEventStoreAppend(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-event-store-'));
  const store = SqliteEventStore.open(join(dir, 'port.sqlite'));
  const raw = openRaw(join(dir, 'raw.sqlite'));
  try {
    const port: AppendOnce = async (size) => {
      await store.appendToStream(`bench-${randomUUID()}`, makeEvents(size), 'no_stream');
    };
    const lines = [`temp dir ${dir}; ${ROUNDS} alternating rounds of ${ROUND_MS} ms per figure`];
    for (const [label, size] of [
      ['single-event appends to new streams', 1],
      ['100-event appends to new streams', 100],
    ] as const) {
      await measure(raw.append, size, WARMUP_MS);
      await measure(port, size, WARMUP_MS);
      const rawRate = empty();
      const portRate = empty();
      const roundRatios: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const r = await measure(raw.append, size, ROUND_MS);
        const p = await measure(port, size, ROUND_MS);
        add(rawRate, r);
        add(portRate, p);
        roundRatios.push(perSecond(p) / perSecond(r));
      }
      const ratio = perSecond(portRate) / perSecond(rawRate);
      // WAL checkpoints land in whichever round crosses them: the spread shows how much that moves.
      const sorted = [...roundRatios].sort((x, y) => x - y);
      const quartiles = `${quantile(sorted, 0.25).toFixed(2)}-${quantile(sorted, 0.75).toFixed(2)}`;
      lines.push(`${label}:`);
      lines.push(`  port ${describe(portRate)}, raw ${describe(rawRate)}`);
      lines.push(
        `  port/raw ${ratio.toFixed(2)} overall; per round median ${quantile(sorted, 0.5).toFixed(2)}, middle half ${quartiles}`,
      );
    }
    return { name: 'event store append (SQLite, WAL + synchronous=FULL)', lines };
  } finally {
    await store.close();
    raw.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The ceiling: prepared inserts, one transaction per batch, no revision check, no idempotency lookup. */
function openRaw(file: string): { append: AppendOnce; close: () => void } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(EVENTS_SCHEMA);
  const insert = db.prepare(
    'INSERT INTO events (stream_id, revision, event_id, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const appendTx = db.transaction((streamId: string, events: NewEvent[]) => {
    events.forEach((e, revision) =>
      insert.run(streamId, revision, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata)),
    );
  });
  return {
    append: (size) => appendTx(`bench-${randomUUID()}`, makeEvents(size)),
    close: () => db.close(),
  };
}

async function measure(append: AppendOnce, size: number, ms: number): Promise<Rate> {
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let appends = 0;
  let now = start;
  while (now < deadline) {
    await append(size);
    appends += 1;
    now = process.hrtime.bigint();
  }
  return { events: appends * size, appends, seconds: Number(now - start) / 1e9 };
}

function makeEvents(size: number): NewEvent[] {
  const metadata: EventMetadata = {
    actor: 'system:bench',
    correlationId: randomUUID(),
    time: new Date().toISOString(),
  };
  return Array.from({ length: size }, (_, i) => ({
    id: randomUUID(),
    type: 'SampleIngested',
    data: { v: 1, sampleId: i, label: 'idle', hash: 'a'.repeat(64) },
    metadata,
  }));
}

function empty(): Rate {
  return { events: 0, appends: 0, seconds: 0 };
}

function add(total: Rate, rate: Rate): void {
  total.events += rate.events;
  total.appends += rate.appends;
  total.seconds += rate.seconds;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

function perSecond(rate: Rate): number {
  return rate.events / rate.seconds;
}

function describe(rate: Rate): string {
  const perSecond = (n: number): string => Math.round(n / rate.seconds).toLocaleString('en-US');
  return rate.events === rate.appends
    ? `${perSecond(rate.events)} appends/s`
    : `${perSecond(rate.events)} events/s (${perSecond(rate.appends)} appends/s)`;
}

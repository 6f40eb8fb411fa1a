// The audit's verify figure: `npm run audit -- verify` (verifyLog) walks a log filled through the
// command path (bench/fillLog.ts; BENCH_EVENTS events, default 20,000, the figure 1,000,000;
// BENCH_DATA_DIR reuses a filled folder), next to the ceiling of only reading the same rows, page by
// page, in the same run. The rebuild figure is bench/restart.ts's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { verifyLog } from '../commands/audit/verifyLog';
import { SqliteEventStore } from '../stores/eventstore/sqliteEventStore';
import type { BenchResult } from './benchResult';
import { fillLog, filledBefore } from './fillLog';

const DEFAULT_EVENTS = 20_000;
const AIM_VERIFY = 100_000;
const PAGE = 2048;

/** Reads every row as readChain does, and does nothing with them: the walk's ceiling. */
function readRows(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    db.defaultSafeIntegers(true);
    const page = db.prepare<[bigint, number], { position: bigint }>('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?');
    let after = 0n;
    let rows = 0;
    for (let batch = page.all(after, PAGE); batch.length > 0; batch = page.all(after, PAGE)) {
      rows += batch.length;
      after = batch.at(-1)!.position;
    }
    return rows;
  } finally {
    db.close();
  }
}

export async function benchAuditLog(): Promise<BenchResult> {
  const events = Number(process.env.BENCH_EVENTS ?? DEFAULT_EVENTS);
  if (!Number.isInteger(events) || events <= 0) throw new Error(`BENCH_EVENTS must be a positive integer, got ${process.env.BENCH_EVENTS}`);
  const given = process.env.BENCH_DATA_DIR;
  const dataDir = given ?? mkdtempSync(join(tmpdir(), 'bench-audit-'));
  const lines: string[] = [];
  try {
    if (!filledBefore(dataDir, events)) {
      const done = await fillLog(dataDir, events);
      lines.push(`filled ${dataDir} with ${done.events.toLocaleString('en-US')} events through the ingestion command path`);
    } else lines.push(`data folder ${dataDir}, filled before`);
    const file = join(dataDir, 'events.sqlite');
    // Each figure twice, the better counts: the first read warms the page cache for both.
    let ceiling = 0;
    let verify = 0;
    let walked = 0;
    for (let round = 0; round < 2; round++) {
      let started = performance.now();
      const rows = readRows(file);
      ceiling = Math.max(ceiling, rows / ((performance.now() - started) / 1000));
      const store = SqliteEventStore.open(file);
      try {
        started = performance.now();
        const report = await verifyLog(store);
        if (report.problem) throw new Error(`the filled log does not verify: ${JSON.stringify(report.problem, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
        verify = Math.max(verify, report.events / ((performance.now() - started) / 1000));
        walked = report.events;
      } finally {
        await store.close();
      }
    }
    lines.push(`verify: ${walked.toLocaleString('en-US')} events, ${Math.round(verify).toLocaleString('en-US')} events/s (aim ${AIM_VERIFY.toLocaleString('en-US')}: ${verify >= AIM_VERIFY ? 'met' : 'not met'})`);
    lines.push(`ceiling, reading the same rows page by page: ${Math.round(ceiling).toLocaleString('en-US')} rows/s; verify / ceiling ${(verify / ceiling).toFixed(2)}`);
    return { name: 'audit: verify the hash-chained log', lines };
  } finally {
    if (!given) rmSync(dataDir, { recursive: true, force: true });
  }
}

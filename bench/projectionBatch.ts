// Events per second the projections apply while catching up on a log (a start, or a rebuild), on
// the memory read store and, when MONGO_URL is set, on MongoDB (FerretDB in CI): in batches through
// the write buffer (one commit per lane and batch) against event by event straight to the store
// with a checkpoint per applied event (how the runner worked before batches), in the same run.
// The log: the test suite's sample log (every handled event type), then samples ingested into one
// project from 20 devices, with an API key use every 100 samples and one sample in 10 deleted.
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { allProjections } from '../projections';
import { ProjectionRunner } from '../projections/projectionRunner';
import type { StoredEvent } from '../stores/eventstore/eventStore';
import { MemoryReadStore } from '../stores/readstore/memoryReadStore';
import { MongoReadStore } from '../stores/readstore/mongoReadStore';
import type { ReadStore } from '../stores/readstore/readStore';
import { fixedLog } from '../test/projections/fixedLog';
import { sampleLog } from '../test/support/sampleLog';
import type { BenchResult } from './benchResult';

const SAMPLES = Number(process.env.BENCH_PROJECTION_SAMPLES ?? 20_000);
/** FerretDB applies a few dozen of these events a second here: a small log keeps the run short. */
const MONGO_SAMPLES = Number(process.env.BENCH_PROJECTION_MONGO_SAMPLES ?? 300);

function benchLog(samples: number): StoredEvent[] {
  const log = sampleLog();
  const template = (type: string) => {
    const found = log.find((e) => e.type === type);
    if (!found) throw new Error(`the sample log has no ${type}`);
    return found;
  };
  const ingested = template('SampleIngested');
  const deleted = template('SampleDeleted');
  const used = template('ApiKeyUsed');
  let position = log.at(-1)!.position;
  const push = (from: StoredEvent, streamId: string, revision: bigint, data: Record<string, unknown>) => {
    position += 1n;
    log.push({ ...from, id: randomUUID(), streamId, revision, position, data: { ...from.data, ...data } });
  };
  for (let i = 0; i < samples; i++) {
    const sampleId = 100_000 + i;
    push(ingested, `sample-${sampleId}`, 0n, { sampleId, fileName: `s${sampleId}.json`, deviceName: `dev-${i % 20}`, label: i % 3 === 0 ? 'idle' : 'wave' });
    if (i % 10 === 9) push(deleted, `sample-${sampleId}`, 1n, { sampleId });
    if (i % 100 === 99) push(used, used.streamId, BigInt(i), {});
  }
  return log;
}

async function rate(store: ReadStore, log: readonly StoredEvent[], buffered: boolean): Promise<number> {
  await store.dropAll();
  const runner = new ProjectionRunner(fixedLog(log), store, allProjections, pino({ level: 'silent' }), 1000, 60_000, { buffered });
  const started = performance.now();
  await runner.start();
  const seconds = (performance.now() - started) / 1000;
  await runner.stop();
  const failures = await runner.failures();
  if (failures.length > 0) throw new Error(`projection ${failures[0]!.projection} failed: ${failures[0]!.error}`);
  return log.length / seconds;
}

async function compare(label: string, store: ReadStore, samples: number, rounds: number): Promise<string[]> {
  const log = benchLog(samples);
  const direct: number[] = [];
  const batched: number[] = [];
  // Taking turns, so drift over the run hits both alike.
  for (let round = 0; round < rounds; round++) {
    direct.push(await rate(store, log, false));
    batched.push(await rate(store, log, true));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const d = median(direct);
  const b = median(batched);
  return [
    `${label}, ${log.length.toLocaleString('en-US')} events, median of ${rounds} rounds:`,
    `  event by event ${Math.round(d).toLocaleString('en-US')} events/s; in batches ${Math.round(b).toLocaleString('en-US')} events/s; batches/event-by-event ${(b / d).toFixed(2)}`,
  ];
}

export async function benchProjectionBatch(): Promise<BenchResult> {
  const lines = await compare('memory read store', new MemoryReadStore(), SAMPLES, 5);
  const url = process.env.MONGO_URL;
  if (!url) lines.push('MongoDB: skipped (MONGO_URL is not set)');
  else {
    const db = `bench_projections_${randomUUID().slice(0, 8)}`;
    const store = await MongoReadStore.connect(url, db);
    try {
      lines.push(...(await compare('MongoDB read store', store, MONGO_SAMPLES, 3)));
      await store.dropAll();
    } finally {
      await store.close();
    }
  }
  return { name: 'projections catching up (events applied per second)', lines };
}

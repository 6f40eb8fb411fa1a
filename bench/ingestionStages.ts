// What each stage of the devices' path costs a small signed sample, each stage alone in this process
// on the real modules, against what the durable floor (bench/durableFloor.ts) does for the same
// stage. The `ingestion` bench gives the whole path over HTTP; this says where its time goes. CPU is
// the process's (user + system) over a run of SAMPLES, 32 at a time as 32 connections give them;
// wall time includes the syncs, which the CPU figure does not.
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IdAllocator } from '../commands/idAllocator';
import { ingestSample } from '../commands/samples/sampleCommands';
import { checkSample } from '../domain/sample/checkSample';
import { parseSampleFile } from '../domain/sample/formats/detectFormat';
import type { ParsedSample } from '../domain/sample/formats/sampleFormat';
import pino from 'pino';
import { allProjections } from '../projections';
import { ProjectionRunner } from '../projections/projectionRunner';
import { readModelIndexes } from '../projections/readModelIndexes';
import { openLog, READ_MODELS_GROUP_COMMIT_MS } from '../service/composition';
import { SqliteReadStore } from '../stores/readstore/sqliteReadStore';
import { SqliteBlobStore } from '../stores/blobstore/sqliteBlobStore';
import { SqliteEventStore } from '../stores/eventstore/sqliteEventStore';
import type { BenchResult } from './benchResult';
import { floorLog } from './durableFloor';
import { smallSignedSample } from './loadGenerator';
import { describeSample, type UploadTarget } from '../ingestion/ingestFile';
import type { UploadOptions } from '../ingestion/uploadHeaders';

const SAMPLES = Number(process.env.BENCH_STAGE_SAMPLES ?? 6400);
const AT_ONCE = 32;
const HMAC_KEY = 'bench-stage-key';

interface StageCost {
  cpuUs: number;
  wallUs: number;
}

/** Runs `once` SAMPLES times, AT_ONCE started together (one turn of the event loop), after a warm-up. */
async function measure(once: (n: number) => unknown): Promise<StageCost> {
  let n = 0;
  const run = async (count: number) => {
    for (let done = 0; done < count; done += AT_ONCE) await Promise.all(Array.from({ length: AT_ONCE }, () => once(n++)));
  };
  await run(Math.min(1000, SAMPLES / 4));
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run(SAMPLES);
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / SAMPLES, wallUs: ((performance.now() - start) * 1000) / SAMPLES };
}

const sampleText = (n: number) => smallSignedSample(HMAC_KEY, n);

export async function benchIngestionStages(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-stages-'));
  const texts = Array.from({ length: 2048 }, (_, i) => Buffer.from(sampleText(i)));
  const body = (n: number) => texts[n % texts.length]!;
  const lines: string[] = [];
  const row = (stage: string, cost: StageCost, floor?: StageCost) =>
    lines.push(`  ${stage}: ${cost.cpuUs.toFixed(0)} us CPU, ${cost.wallUs.toFixed(0)} us wall${floor ? `; the floor's ${floor.cpuUs.toFixed(0)} us CPU, ${floor.wallUs.toFixed(0)} us wall` : ''}`);
  try {
    // 1. The body to a checked sample: the streaming parser with its HMAC, vs JSON.parse and one HMAC.
    const parse = (n: number) => {
      const bytes = body(n);
      return parseSampleFile({
        source: { size: bytes.length, read: async (offset, length) => bytes.subarray(offset, offset + length), readAll: async () => bytes },
        fileName: `s${n}.json`,
        declaredType: 'application/json',
        hmacKeys: [HMAC_KEY],
      });
    };
    const floorParse = (n: number) => {
      const text = body(n).toString('utf8');
      const sample = JSON.parse(text) as { signature: string };
      return createHmac('sha256', HMAC_KEY).update(text.replace(sample.signature, '0'.repeat(64))).digest();
    };
    row('parse and signature', await measure(parse), await measure(floorParse));

    // 2. The blob: the small tier, in the log's file (here alone: in the service its puts share the
    // log's commit, a transaction and a sync a turn, with the appends of the samples before them).
    const blobLog = SqliteEventStore.open(join(dir, 'blobs-log.sqlite'));
    const blobs = SqliteBlobStore.inLogFile(blobLog.tables());
    row('blob put (in the log file)', await measure((n) => blobs.put(Buffer.from(`${n}:${randomUUID()}`))));
    await blobs.close();
    await blobLog.close();

    // 3. The event: the sample's decider and the log (sealing decorator, chain, group commit), on a
    // fresh id; vs the floor's one row with the event and the sample's bytes, one transaction a turn.
    const parsed = await parse(0);
    const log = await openLog({ dataDir: join(dir, 'log'), eventStoreUrl: undefined, mongoUrl: undefined, mongoDb: 'bench' });
    const ids = new IdAllocator(log.events, 1000);
    const sample = (n: number) => checkSample(describe(parsed, n));
    const ctx = () => ({ actor: 'apikey:1', correlationId: randomUUID(), now: new Date() });
    const append = await measure((n) => ingestSample({ events: log.events, ids }, sample(n), ctx()));
    row('event append (events.sqlite)', append);

    // 4. The projections, live: the same appends with every projection following the log into the
    // SQLite read models (their group commit as the service runs it), each turn's appends waited
    // for until the read models have them; what this adds to the appends alone is theirs.
    const readStore = SqliteReadStore.open(join(dir, 'read-models.sqlite'), { indexes: readModelIndexes, groupCommitMs: READ_MODELS_GROUP_COMMIT_MS });
    const runner = new ProjectionRunner(log.events, readStore, allProjections, pino({ level: 'silent' }));
    await runner.start();
    let turn: Promise<{ position: bigint }>[] = [];
    const projected = await measure(async (n) => {
      const appended = ingestSample({ events: log.events, ids }, sample(n), ctx());
      turn.push(appended);
      // The turn's last sample waits for the read models to have them all, as 32 devices would not,
      // but the work is the same and counted once.
      if (turn.length === AT_ONCE) {
        const mine = turn;
        turn = [];
        const positions = await Promise.all(mine);
        await runner.waitFor(positions.at(-1)!.position, 60_000);
      } else await appended;
    });
    await runner.stop();
    await readStore.close();
    row('projections, live (SQLite read models)', { cpuUs: projected.cpuUs - append.cpuUs, wallUs: projected.wallUs - append.wallUs });
    await log.close();
    const floor = floorRows(join(dir, 'floor.sqlite'), body);
    row('durable floor row (event and bytes)', await measure((n) => floor.append(n)));
    floor.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { name: `ingestionStages: each stage of a small signed sample alone, ${SAMPLES} samples ${AT_ONCE} at a time (CPU of this process per sample)`, lines };
}

/** The upload every bench sample is described as: key 1 of project 1, to training, no headers. */
const TARGET: UploadTarget = { projectId: 1, apiKeyId: 1, category: 'training', split: false, hmacKeys: [HMAC_KEY], hmacKeyIds: [1], requestId: 'bench' };
const OPTIONS: UploadOptions = { label: 's', disallowDuplicates: false, addDateId: false, metadata: {}, uploadSource: null, deviceType: null };

/** Sample `n` as the ingestion describes it, each with a content hash of its own. */
function describe(parsed: ParsedSample, n: number) {
  const received = { sha256: createHash('sha256').update(String(n)).digest('hex'), size: 420 };
  return describeSample(TARGET, OPTIONS, received, `s${n}.json`, parsed, 'training', {});
}

/** bench/durableFloor.ts's storage alone: a row of event and bytes, the rows of one turn in one transaction. */
function floorRows(file: string, body: (n: number) => Buffer): { append(n: number): Promise<void>; close(): void } {
  const log = floorLog(file);
  return {
    append: (n) => log.append(`sample-${randomUUID()}`, JSON.stringify({ type: 'SampleIngested', id: randomUUID(), data: { fileName: `s${n}.json`, at: new Date().toISOString() } }), body(n)),
    close: () => log.close(),
  };
}

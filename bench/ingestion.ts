// The ingestion API through the whole service, started in this process on a temp data folder and
// talking only to 127.0.0.1, loaded by a load generator in a child process (bench/loadGenerator.ts)
// as real devices are. The figures:
// 1. small signed JSON samples per second through `POST /api/training/data` over 32 keep-alive
//    connections, next to a bare Koa handler in the service's process, on another port, that reads
//    each body fully and answers the file name as text; on the embedded default and, when MONGO_URL
//    is set, on the MongoDB read and blob stores (FerretDB here: an indicator);
// 2. MB/s for one 100 MB WAV sent as multipart to `POST /api/training/files`, streamed from disk by
//    the child, next to the disk itself: 100 MB through fs.createWriteStream and an fsync, in the
//    same folder, from this process while the service idles (the issue's ceiling); and next to the
//    least any HTTP service must do with it: a bare server in this process that parses the same
//    multipart body (busboy, as the service) into a file and fsyncs it, loaded by the same client;
// 3. the service process's RSS before the uploads and its peak during them.
// Contenders take turns round by round, so drift in the machine's speed hits all alike.

import { randomUUID } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { once } from 'node:events';
import http from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import Koa from 'koa';
import { MAX_FILE_BYTES } from '../ingestion/receiveFile';
import type { BenchResult } from './benchResult';
import { HOST, JSON_HEADERS, benchStores, closeServer, expectOk, listen, ownerWithProject, quantiles, request, startBenchService, type BenchStore } from './benchKit';
import { durableFloor } from './durableFloor';
import { startLoadGenerator, type RoundResult } from './loadGenerator';
import { processCpuSeconds, spawnService, stopService, type Started } from './serviceProcess';

/** 1. Keep-alive connections, one request in flight on each. */
const CONNECTIONS = 32;
const SMALL_ROUNDS = 6;
const SERVICE_ROUND_MS = 1000;
const BARE_ROUND_MS = 500;
const WARMUP_MS = 500;

/** 2. The largest file the service takes (100 MB, decimal), as one 16-bit mono WAV. */
const FILE_BYTES = MAX_FILE_BYTES;
const WAV_HEADER_BYTES = 44;
const SAMPLE_RATE = 16_000;
const FILE_ROUNDS = 3;
/** Chunk size of the raw disk writes and of the reads of the WAV as the multipart body. */
const CHUNK_BYTES = 1024 * 1024;
/** 3. How often RSS is sampled during the uploads. */
const RSS_SAMPLE_MS = 20;

/** Storage-layer bytes of this process (Linux /proc/self/io), undefined where it cannot be read. */
interface IoCounters {
  writeBytes: number;
  cancelledWriteBytes: number;
}

export async function benchIngestion(): Promise<BenchResult> {
  const lines = ['service in this process on ' + HOST + '; load generator in a child process; bare Koa in the service\'s process, on its own port'];
  for (const store of benchStores()) {
    lines.push(...(await smallSamples(store)));
    if (splittable(store)) lines.push(...(await smallSamples(store, 'ingestion apart')));
  }
  lines.push(...(await largeFile()));
  return { name: 'ingestion: small signed samples and a 100 MB file over HTTP, load generator in its own process', lines };
}

/** Roles in processes of their own share the read models: not on the memory store. */
export function splittable(store: BenchStore): boolean {
  return store.env.READ_STORE?.toLowerCase() !== 'memory';
}

/**
 * Figure 1 on one read store. `layout` 'one process' runs every role in this process, as the embedded
 * default does; 'ingestion apart' runs the ingestion role in a process of its own on the same data
 * folder and read store (ROLES=ingestion), the other roles in this one: the deployment for many
 * devices, where the projections' work leaves the devices' path.
 */
export async function smallSamples(store: BenchStore, layout: 'one process' | 'ingestion apart' = 'one process'): Promise<string[]> {
  const agent = new http.Agent({ keepAlive: true });
  let started: Awaited<ReturnType<typeof startBenchService>> | undefined;
  let ingestionProcess: Started | undefined;
  let bare: http.Server | undefined;
  let floorServer: http.Server | undefined;
  let floor: ReturnType<typeof durableFloor> | undefined;
  let load: Awaited<ReturnType<typeof startLoadGenerator>> | undefined;
  try {
    const apart = layout === 'ingestion apart';
    started = await startBenchService('ingestion', apart ? { ...store, env: { ...store.env, ROLES: 'api,projections,sagas,jobs' } } : store);
    const { service, dataDir } = started;
    const api = service.apiUrl;
    // The same stores as this process, which takes nothing from the environment but `store.env`: a
    // MONGO_URL in the bench's environment is the other store's, not this one's.
    if (apart) ingestionProcess = await spawnService(dataDir, [], { READ_STORE: '', MONGO_URL: '', MONGO_DB: '', EVENTSTORE_URL: '', ...store.env, ROLES: 'ingestion' });
    const ingestion = apart ? String(ingestionProcess!.line.ingestionUrl ?? '') : service.ingestionUrl;
    if (!api || !ingestion) throw new Error('the service started without its api and ingestion roles');
    const { token, projectId, apiKey } = await ownerWithProject(agent, api, 'benchingest', 'Bench ingestion');
    const auth = { ...JSON_HEADERS, 'x-jwt-token': token };
    const hmacKey = String((JSON.parse(expectOk(await request(agent, new URL(`/v1/api/${projectId}/devkeys`, api), 'GET', auth), 'devkeys')) as { hmacKey: string }).hmacKey);

    // The ceiling: one Koa middleware reading the whole body and answering the file name as text.
    const app = new Koa();
    app.use(async (ctx) => {
      let bytes = 0;
      for await (const chunk of ctx.req) bytes += (chunk as Buffer).length;
      if (bytes === 0) ctx.throw(400, 'empty body');
      ctx.type = 'text/plain';
      ctx.body = decodeURIComponent(ctx.get('x-file-name'));
    });
    bare = http.createServer(app.callback());
    const bareUrl = `http://${HOST}:${await listen(bare)}`;
    // The second ceiling: the least a durable ingestion of the same samples does (bench/durableFloor.ts).
    floor = durableFloor(join(dataDir, 'durable-floor.sqlite'), hmacKey);
    floorServer = http.createServer(floor.callback);
    const floorUrl = `http://${HOST}:${await listen(floorServer)}`;

    load = await startLoadGenerator(
      [
        { name: 'service', kind: 'data', url: `${ingestion}/api/training/data`, apiKey, hmacKey },
        { name: 'bare', kind: 'data', url: `${bareUrl}/api/training/data`, apiKey, hmacKey },
        { name: 'floor', kind: 'data', url: `${floorUrl}/api/training/data`, apiKey, hmacKey },
      ],
      CONNECTIONS,
    );
    for (const target of ['service', 'bare', 'floor']) await load.round(target, WARMUP_MS);
    const rounds: { service: RoundResult; ingestionCpu: number; bare: RoundResult; floor: RoundResult }[] = [];
    for (let round = 0; round < SMALL_ROUNDS; round++) {
      const cpuBefore = ingestionProcess ? processCpuSeconds(ingestionProcess.child.pid!) : 0;
      const serviceRound = await load.round('service', SERVICE_ROUND_MS);
      const ingestionCpu = ingestionProcess ? processCpuSeconds(ingestionProcess.child.pid!) - cpuBefore : serviceRound.hostCpuSeconds;
      rounds.push({ service: serviceRound, ingestionCpu, bare: await load.round('bare', BARE_ROUND_MS), floor: await load.round('floor', BARE_ROUND_MS) });
    }
    const failed = rounds.flatMap((r) => [r.service, r.bare, r.floor]).filter((r) => r.failures > 0);
    if (failed.length > 0) throw new Error(`${failed[0]!.target} failed ${failed[0]!.failures} calls: ${failed[0]!.firstFailure}`);

    // Everything acknowledged is durable; the read models follow: wait for them, then count.
    if (!(await service.readModels.waitFor((await service.stores.events.headPosition())!, 60_000))) throw new Error("the read models did not reach the log's head within 60 s");
    const listing = async (query: string) =>
      (JSON.parse(expectOk(await request(agent, new URL(`/v1/api/${projectId}/raw-data?category=training&limit=1${query}`, api), 'GET', auth), 'raw-data listing')) as { totalCount: number }).totalCount;
    const stored = await listing('');
    const invalid = await listing('&signatureValidity=invalid');

    const rate = (rs: RoundResult[]) => rs.reduce((a, r) => a + r.ops, 0) / rs.reduce((a, r) => a + r.seconds, 0);
    const serviceRate = rate(rounds.map((r) => r.service));
    const bareRate = rate(rounds.map((r) => r.bare));
    const floorRate = rate(rounds.map((r) => r.floor));
    const perRound = rounds.map((r) => r.service.ops / r.service.seconds / (r.floor.ops / r.floor.seconds));
    const cpuPerCall = (rs: RoundResult[]) => (rs.reduce((a, r) => a + r.hostCpuSeconds, 0) / rs.reduce((a, r) => a + r.ops, 0)) * 1e6;
    const ingestionCpu = (rounds.reduce((a, r) => a + r.ingestionCpu, 0) / rounds.reduce((a, r) => a + r.service.ops, 0)) * 1e6;
    const bareCpu = cpuPerCall(rounds.map((r) => r.bare));
    const floorCpu = cpuPerCall(rounds.map((r) => r.floor));
    const lat = (rs: RoundResult[]) => {
      const [p50, p99] = quantiles(rs.flatMap((r) => r.latencies), [0.5, 0.99]);
      return `p50 ${p50!.toFixed(1)} ms, p99 ${p99!.toFixed(1)} ms`;
    };
    const us = (x: number) => `${x.toFixed(0)} us`;
    // Near a whole core, the generator was saturated: that target's rate is the generator's ceiling.
    const generatorLine = (name: string, rs: RoundResult[]) => {
      const cpu = rs.reduce((a, r) => a + r.generatorCpuSeconds, 0);
      return `${name} ${us((cpu / rs.reduce((a, r) => a + r.ops, 0)) * 1e6)} a call, ${Math.round((100 * cpu) / rs.reduce((a, r) => a + r.seconds, 0))}% of a core`;
    };
    return [
      `1. POST /api/training/data on the ${store.label}, ${apart ? 'the ingestion role in a process of its own (ROLES=ingestion; the other roles in this one)' : `every role in one process${service.config.threadRoles.size > 0 ? ` (${[...service.config.threadRoles].join(', ')} on a thread of their own)` : ''}`}: new signed JSON samples (HS256, 10 rows x 3 sensors, about 420 bytes), ${CONNECTIONS} keep-alive connections:`,
      `  service ${Math.round(serviceRate).toLocaleString('en-US')}/s (${lat(rounds.map((r) => r.service))}), bare Koa ${Math.round(bareRate).toLocaleString('en-US')}/s (${lat(rounds.map((r) => r.bare))}), durable floor ${Math.round(floorRate).toLocaleString('en-US')}/s (${lat(rounds.map((r) => r.floor))})`,
      `  service/durable-floor ${(serviceRate / floorRate).toFixed(3)} overall (aim, issue 28: 0.5 or more in one process, with a p99 under 40 ms); ${spreadOf(perRound)}; service/bare-Koa ${(serviceRate / bareRate).toFixed(3)}, durable-floor/bare-Koa ${(floorRate / bareRate).toFixed(3)}`,
      apart
        ? `  CPU per sample: the ingestion process ${us(ingestionCpu)}, this process (projections, api) ${us(cpuPerCall(rounds.map((r) => r.service)))}; bare Koa ${us(bareCpu)}, durable floor ${us(floorCpu)}`
        : `  CPU of the serving process per sample: service ${us(ingestionCpu)}, bare Koa ${us(bareCpu)} (bare/service ${(bareCpu / ingestionCpu).toFixed(3)}), durable floor ${us(floorCpu)}`,
      `  the load generator (one thread, a process of its own): ${generatorLine('service', rounds.map((r) => r.service))}; ${generatorLine('bare Koa', rounds.map((r) => r.bare))}; ${generatorLine('durable floor', rounds.map((r) => r.floor))}`,
      `  ${stored.toLocaleString('en-US')} samples stored, ${invalid} with an invalid signature; ${SMALL_ROUNDS} alternating rounds (${SERVICE_ROUND_MS} ms service, ${BARE_ROUND_MS} ms each ceiling) after ${WARMUP_MS} ms of warm-up each`,
    ];
  } finally {
    await load?.stop();
    agent.destroy();
    await closeServer(bare);
    await closeServer(floorServer);
    floor?.close();
    if (ingestionProcess) await stopService(ingestionProcess);
    await started?.stop();
  }
}

/** Figures 2 and 3, on the embedded default. */
async function largeFile(): Promise<string[]> {
  const agent = new http.Agent({ keepAlive: true });
  let started: Awaited<ReturnType<typeof startBenchService>> | undefined;
  let load: Awaited<ReturnType<typeof startLoadGenerator>> | undefined;
  let rssTimer: NodeJS.Timeout | undefined;
  try {
    started = await startBenchService('ingestion-large');
    const { service, dataDir } = started;
    const api = service.apiUrl;
    const ingestion = service.ingestionUrl;
    if (!api || !ingestion) throw new Error('the service started without its api and ingestion roles');
    const { apiKey } = await ownerWithProject(agent, api, 'benchlargefile', 'Bench large file');
    load = await startLoadGenerator([], 1);

    const wavPath = join(dataDir, 'bench.wav');
    await writeWav(wavPath);
    const rawPath = join(dataDir, 'raw-disk-write.bin');
    const pattern = Buffer.alloc(CHUNK_BYTES);
    for (let i = 0; i < pattern.length; i += 2) pattern.writeInt16LE(Math.round(8000 * Math.sin((i / 2) * 0.1)), i);

    const rssBefore = process.memoryUsage.rss();
    let rssPeak = 0;
    const uploadSeconds: number[] = [];
    const diskSeconds: number[] = [];
    const bareSeconds: number[] = [];
    const bareServer = http.createServer(bareMultipart(join(dataDir, 'bare-multipart.bin')));
    const bareUrl = `http://${HOST}:${await listen(bareServer)}/api/training/files`;
    const uploadIo: IoCounters[] = [];
    const diskIo: IoCounters[] = [];
    for (let round = 0; round < FILE_ROUNDS; round++) {
      let io = readIo();
      const start = process.hrtime.bigint();
      await rawDiskWrite(rawPath, pattern);
      diskSeconds.push(Number(process.hrtime.bigint() - start) / 1e9);
      diskIo.push(ioSince(io));
      await rm(rawPath);

      const bare = await load.upload({ url: bareUrl, apiKey, path: wavPath, fileName: `bare.${round}.wav`, contentType: 'audio/wav' });
      if (bare.status !== 200) throw new Error(`the bare multipart server answered ${bare.status}: ${bare.text.slice(0, 300)}`);
      bareSeconds.push(bare.seconds);
      await rm(join(dataDir, 'bare-multipart.bin'));

      // A different content each round: the blob store keeps content it already has without writing it again.
      await stamp(wavPath, round);
      rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
      rssTimer = setInterval(() => {
        rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
      }, RSS_SAMPLE_MS);
      io = readIo();
      const fileName = `noise.${round}.wav`;
      const reply = await load.upload({ url: `${ingestion}/api/training/files`, apiKey, path: wavPath, fileName, contentType: 'audio/wav' });
      uploadSeconds.push(reply.seconds);
      uploadIo.push(ioSince(io));
      clearInterval(rssTimer);
      rssTimer = undefined;
      rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
      const expected = JSON.stringify({ success: true, files: [{ success: true, fileName }] });
      if (reply.status !== 200 || reply.text !== expected) throw new Error(`POST /api/training/files answered ${reply.status}: ${reply.text.slice(0, 300)}`);
    }
    const mbPerSecond = (seconds: number) => FILE_BYTES / 1e6 / seconds;
    const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
    const uploadMbs = (FILE_BYTES * FILE_ROUNDS) / 1e6 / sum(uploadSeconds);
    const diskMbs = (FILE_BYTES * FILE_ROUNDS) / 1e6 / sum(diskSeconds);
    const roundRatios = uploadSeconds.map((u, i) => diskSeconds[i]! / u);
    const bareMbs = (FILE_BYTES * FILE_ROUNDS) / 1e6 / sum(bareSeconds);
    await closeServer(bareServer);
    const io = (list: IoCounters[]) => {
      if (list.some((c) => c.writeBytes < 0)) return 'unknown (/proc/self/io unreadable)';
      const written = sum(list.map((c) => c.writeBytes)) / list.length;
      const cancelled = sum(list.map((c) => c.cancelledWriteBytes)) / list.length;
      return `${mb(written)} (${(written / FILE_BYTES).toFixed(2)}x the file, ${mb(cancelled)} of it cancelled)`;
    };
    return [
      `2. POST /api/training/files on the embedded default: one ${FILE_BYTES / 1e6} MB WAV (16-bit mono ${SAMPLE_RATE / 1000} kHz, parsed by its header), one multipart part streamed from disk by the load generator in ${CHUNK_BYTES / 1024} KiB reads; ` +
        `disk = fs.createWriteStream of ${FILE_BYTES / 1e6} MB in ${CHUNK_BYTES / 1024} KiB writes + fsync (flush: true), same temp dir, while the service idles:`,
      `  upload ${uploadMbs.toFixed(0)} MB/s (rounds ${uploadSeconds.map((s) => mbPerSecond(s).toFixed(0)).join(', ')}), disk ${diskMbs.toFixed(0)} MB/s (rounds ${diskSeconds.map((s) => mbPerSecond(s).toFixed(0)).join(', ')}); MB = 10^6 bytes`,
      `  upload/disk ${(uploadMbs / diskMbs).toFixed(3)} overall (aim: 0.5 or more); per round ${roundRatios.map((r) => r.toFixed(3)).join(', ')}`,
      `  bare multipart server (busboy into a file, fsynced; no service) ${bareMbs.toFixed(0)} MB/s (rounds ${bareSeconds.map((s) => mbPerSecond(s).toFixed(0)).join(', ')}): bare/disk ${(bareMbs / diskMbs).toFixed(3)}, upload/bare ${(uploadMbs / bareMbs).toFixed(3)}`,
      `  bytes the service's process wrote to files per round (/proc/self/io write_bytes; cancelled = deleted before writeback): upload ${io(uploadIo)}, disk ${io(diskIo)}`,
      `3. service RSS: ${mb(rssBefore)} before the uploads; peak ${mb(rssPeak)} during them (sampled every ${RSS_SAMPLE_MS} ms, +${mb(rssPeak - rssBefore)}); ${FILE_ROUNDS} alternating rounds (disk write, then upload), each upload a different content`,
    ];
  } finally {
    if (rssTimer) clearInterval(rssTimer);
    await load?.stop();
    agent.destroy();
    await started?.stop();
  }
}

function spreadOf(ratios: readonly number[]): string {
  const [q1, median, q3] = quantiles(ratios, [0.25, 0.5, 0.75]);
  return `per round median ${median!.toFixed(3)}, middle half ${q1!.toFixed(3)}-${q3!.toFixed(3)}`;
}

/** A 16-bit mono PCM WAV of exactly FILE_BYTES, written once and synced so its writeback is not measured. */
async function writeWav(path: string): Promise<void> {
  const dataBytes = FILE_BYTES - WAV_HEADER_BYTES;
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(FILE_BYTES - 8, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  const noise = Buffer.alloc(CHUNK_BYTES);
  for (let i = 0; i < noise.length; i += 2) noise.writeInt16LE(Math.round(3000 * Math.sin(i / 7) + ((i * 7919) % 401) - 200), i);
  const out = createWriteStream(path, { flush: true });
  const closed = once(out, 'close');
  await pipeline(async function* () {
    yield header;
    for (let left = dataBytes; left > 0; left -= noise.length) yield noise.subarray(0, Math.min(left, noise.length));
  }, out);
  await closed;
}

/** Overwrites the first audio frames with the round number, so each upload is new content. */
async function stamp(path: string, round: number): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    const mark = Buffer.alloc(16);
    mark.write(randomUUID().replaceAll('-', '').slice(0, 12), 0, 'latin1');
    mark.writeUInt32LE(round, 12);
    await handle.write(mark, 0, mark.length, WAV_HEADER_BYTES);
  } finally {
    await handle.close();
  }
}

/**
 * The least an HTTP service does with a multipart upload: parse it (busboy, as the service) into a
 * file, fsynced before it answers; no hashing, checks or storage of its own.
 */
function bareMultipart(path: string): http.RequestListener {
  return (req, res) => {
    const parser = busboy({ headers: req.headers });
    let written: Promise<void> | undefined;
    parser.on('file', (_name, file) => {
      written = pipeline(file, createWriteStream(path, { highWaterMark: CHUNK_BYTES, flush: true }));
    });
    parser.on('close', () => {
      (written ?? Promise.reject(new Error('no file part'))).then(
        () => res.end('ok'),
        (error: unknown) => {
          res.statusCode = 500;
          res.end(String(error));
        },
      );
    });
    parser.on('error', (error: unknown) => {
      res.statusCode = 400;
      res.end(String(error));
    });
    req.pipe(parser);
  };
}

/** The ceiling: FILE_BYTES through a write stream, fsynced before it closes. */
async function rawDiskWrite(path: string, chunk: Buffer): Promise<void> {
  const out = createWriteStream(path, { flush: true });
  const closed = once(out, 'close');
  await pipeline(async function* () {
    for (let left = FILE_BYTES; left > 0; left -= chunk.length) yield chunk.subarray(0, Math.min(left, chunk.length));
  }, out);
  await closed;
}

function readIo(): IoCounters {
  try {
    const text = readFileSync('/proc/self/io', 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
    return { writeBytes: field('write_bytes'), cancelledWriteBytes: field('cancelled_write_bytes') };
  } catch {
    return { writeBytes: Number.NaN, cancelledWriteBytes: Number.NaN };
  }
}

/** Counters since `before`; negative when they cannot be read. */
function ioSince(before: IoCounters): IoCounters {
  const now = readIo();
  const d = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) ? a - b : -1);
  return { writeBytes: d(now.writeBytes, before.writeBytes), cancelledWriteBytes: d(now.cancelledWriteBytes, before.cancelledWriteBytes) };
}












function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(0)} MB`;
}

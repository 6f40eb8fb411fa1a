// The ingestion API through the whole service, started in-process on the embedded default (SQLite
// event store, SQLite-and-file blob store, in-memory read models, every role) in a temp data folder, talking
// only to 127.0.0.1. Client, service and ceilings all run in this one Node process, on its one
// event loop: the client's own work is part of every figure. Three things are measured:
// 1. small signed JSON samples per second through `POST /api/training/data` over 32 keep-alive
//    connections, next to a bare Koa handler on another port that takes the same kind of bodies
//    (reads each fully) and answers the file name as text;
// 2. MB/s for one 100 MB WAV sent as multipart to `POST /api/training/files`, streamed from disk,
//    next to the disk itself: 100 MB through fs.createWriteStream and an fsync, in the same folder;
// 3. the process's RSS before the uploads and its peak during them.
// Contenders take turns round by round, so drift in the machine's speed hits all alike.

import { createHmac, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { once } from 'node:events';
import http from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import Koa from 'koa';
import { MAX_FILE_BYTES } from '../ingestion/receiveFile';
import type { BenchResult } from './benchResult';
import { HOST, JSON_HEADERS, add, describe, empty, expectOk, listen, measure, ms, perSecond, ratio, request, spread, type Op, type Reply, closeServer, startBenchService, ownerWithProject } from './benchKit';


/** 1. Keep-alive connections, one request in flight on each. */
const CONNECTIONS = 32;
const ROWS = 10;
const SENSORS = ['accX', 'accY', 'accZ'];
const SMALL_ROUNDS = 8;
const SERVICE_ROUND_MS = 500;
const BARE_ROUND_MS = 250;
const WARMUP_MS = 300;

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
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let started: Awaited<ReturnType<typeof startBenchService>> | undefined;
  let bare: http.Server | undefined;
  let rssTimer: NodeJS.Timeout | undefined;
  try {
    started = await startBenchService('ingestion');
    const { service, dataDir } = started;
    const api = service.apiUrl;
    const ingestion = service.ingestionUrl;
    if (!api || !ingestion) throw new Error('the service started without its api and ingestion roles');
    const send = (base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      request(agent, new URL(path, base), method, headers, body);

    // A user, a project, its API key and its development HMAC key.
    const { token, projectId, apiKey } = await ownerWithProject(agent, api, 'benchingest', 'Bench ingestion');
    const auth = { ...JSON_HEADERS, 'x-jwt-token': token };
    const hmacKey = String((JSON.parse(expectOk(await send(api, 'GET', `/v1/api/${projectId}/devkeys`, auth), 'devkeys')) as { hmacKey: string }).hmacKey);

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

    const lines = [
      `service in-process on ${HOST} (embedded default: SQLite event store, blob store of SQLite for small files and files for large ones, memory read models, all roles), temp dir ${dataDir}`,
      'client, service and bare Koa share this one Node process (one event loop, the libuv thread pool, the same disk): every figure includes the client\'s own work',
    ];

    // 1. Small signed samples through /data, next to the bare handler.
    let sent = 0;
    let bodyBytes = 0;
    const dataOp = (base: string, what: string): Op => async () => {
      const n = sent++;
      const fileName = `idle.${n}.json`;
      const body = smallSample(hmacKey, n);
      bodyBytes += body.length;
      const reply = await request(agent, new URL('/api/training/data', base), 'POST', { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': fileName }, body);
      if (reply.status !== 200 || reply.text !== fileName) throw new Error(`${what} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
    };
    const ingest = dataOp(ingestion, 'POST /api/training/data');
    const bareIngest = dataOp(bareUrl, 'bare Koa');
    await measure(ingest, WARMUP_MS, CONNECTIONS);
    await measure(bareIngest, WARMUP_MS, CONNECTIONS);
    const serviceRate = empty();
    const bareRate = empty();
    const perRound: number[] = [];
    for (let round = 0; round < SMALL_ROUNDS; round++) {
      const s = await measure(ingest, SERVICE_ROUND_MS, CONNECTIONS);
      const b = await measure(bareIngest, BARE_ROUND_MS, CONNECTIONS);
      add(serviceRate, s);
      add(bareRate, b);
      perRound.push(perSecond(s) / perSecond(b));
    }
    const listing = (query: string) =>
      send(api, 'GET', `/v1/api/${projectId}/raw-data?category=training&limit=1${query}`, { 'x-jwt-token': token }).then(
        (reply) => (JSON.parse(expectOk(reply, 'raw-data listing')) as { totalCount: number }).totalCount,
      );
    const stored = await listing('');
    const invalid = await listing('&signatureValidity=invalid');
    lines.push(
      `1. POST /api/training/data: signed JSON samples (HS256, ${ROWS} rows x ${SENSORS.length} sensors, ${Math.round(bodyBytes / sent)} bytes on average, every body distinct), ${CONNECTIONS} keep-alive connections:`,
    );
    lines.push(`  service ${describe(serviceRate)}, bare Koa ${describe(bareRate)} (reads the body, answers the file name as text)`);
    lines.push(`  service/bare-Koa ${ratio(serviceRate, bareRate)} overall (aim: 0.5 or more); ${spread(perRound)}`);
    lines.push(
      `  mean latency at ${CONNECTIONS} in flight: service ${ms(serviceRate.latencySeconds / serviceRate.ops)}, bare Koa ${ms(bareRate.latencySeconds / bareRate.ops)}; ` +
        `${stored} samples stored, ${invalid} of them with an invalid signature`,
    );
    lines.push(`  ${SMALL_ROUNDS} alternating rounds (${SERVICE_ROUND_MS} ms service, ${BARE_ROUND_MS} ms bare Koa) after ${WARMUP_MS} ms of warm-up each`);

    // 2. One 100 MB WAV through multipart /files, next to the disk; 3. RSS during the uploads.
    const wavPath = join(dataDir, 'bench.wav');
    await writeWav(wavPath);
    const rawPath = join(dataDir, 'raw-disk-write.bin');
    const pattern = Buffer.alloc(CHUNK_BYTES);
    for (let i = 0; i < pattern.length; i += 2) pattern.writeInt16LE(Math.round(8000 * Math.sin((i / 2) * 0.1)), i);

    const rssBefore = process.memoryUsage.rss();
    const maxRssBefore = process.resourceUsage().maxRSS * 1024;
    let rssPeak = 0;
    const uploadSeconds: number[] = [];
    const diskSeconds: number[] = [];
    const uploadIo: IoCounters[] = [];
    const diskIo: IoCounters[] = [];
    for (let round = 0; round < FILE_ROUNDS; round++) {
      let io = readIo();
      let start = process.hrtime.bigint();
      await rawDiskWrite(rawPath, pattern);
      diskSeconds.push(Number(process.hrtime.bigint() - start) / 1e9);
      diskIo.push(ioSince(io));
      await rm(rawPath);

      // A different content each round: the blob store keeps content it already has without writing it again.
      await stamp(wavPath, round);
      rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
      rssTimer = setInterval(() => {
        rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
      }, RSS_SAMPLE_MS);
      io = readIo();
      start = process.hrtime.bigint();
      const fileName = `noise.${round}.wav`;
      const reply = await uploadFile(agent, new URL('/api/training/files', ingestion), apiKey, wavPath, fileName);
      uploadSeconds.push(Number(process.hrtime.bigint() - start) / 1e9);
      uploadIo.push(ioSince(io));
      clearInterval(rssTimer);
      rssTimer = undefined;
      rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
      const expected = JSON.stringify({ success: true, files: [{ success: true, fileName }] });
      if (reply.status !== 200 || reply.text !== expected) throw new Error(`POST /api/training/files answered ${reply.status}: ${reply.text.slice(0, 300)}`);
    }
    const maxRssAfter = process.resourceUsage().maxRSS * 1024;
    const mbPerSecond = (seconds: number) => FILE_BYTES / 1e6 / seconds;
    const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
    const uploadMbs = (FILE_BYTES * FILE_ROUNDS) / 1e6 / sum(uploadSeconds);
    const diskMbs = (FILE_BYTES * FILE_ROUNDS) / 1e6 / sum(diskSeconds);
    const roundRatios = uploadSeconds.map((u, i) => diskSeconds[i]! / u);
    lines.push(
      `2. POST /api/training/files: one ${FILE_BYTES / 1e6} MB WAV (16-bit mono ${SAMPLE_RATE / 1000} kHz, parsed by its header), one multipart part streamed from disk in ${CHUNK_BYTES / 1024} KiB reads; ` +
        `disk = fs.createWriteStream of ${FILE_BYTES / 1e6} MB in ${CHUNK_BYTES / 1024} KiB writes + fsync (flush: true), same temp dir:`,
    );
    lines.push(
      `  upload ${uploadMbs.toFixed(0)} MB/s (rounds ${uploadSeconds.map((s) => `${mbPerSecond(s).toFixed(0)}`).join(', ')}), ` +
        `disk ${diskMbs.toFixed(0)} MB/s (rounds ${diskSeconds.map((s) => `${mbPerSecond(s).toFixed(0)}`).join(', ')}); MB = 10^6 bytes`,
    );
    lines.push(`  upload/disk ${(uploadMbs / diskMbs).toFixed(3)} overall (aim: 0.5 or more); per round ${roundRatios.map((r) => r.toFixed(3)).join(', ')}`);
    const io = (list: IoCounters[]) => {
      if (list.some((c) => c.writeBytes < 0)) return 'unknown (/proc/self/io unreadable)';
      const written = sum(list.map((c) => c.writeBytes)) / list.length;
      const cancelled = sum(list.map((c) => c.cancelledWriteBytes)) / list.length;
      return `${mb(written)} (${(written / FILE_BYTES).toFixed(2)}x the file, ${mb(cancelled)} of it cancelled)`;
    };
    lines.push(
      `  bytes written to files per round (/proc/self/io write_bytes; cancelled = deleted before writeback): upload ${io(uploadIo)}, disk ${io(diskIo)}`,
    );
    lines.push(
      `3. RSS: ${mb(rssBefore)} before the uploads; peak ${mb(rssPeak)} during them (sampled every ${RSS_SAMPLE_MS} ms, +${mb(rssPeak - rssBefore)}); ` +
        `process maxRSS ${mb(maxRssBefore)} before, ${mb(maxRssAfter)} after`,
    );
    lines.push(`  ${FILE_ROUNDS} alternating rounds (disk write, then upload), each upload with a different content`);
    return { name: 'ingestion: small signed samples and a 100 MB file over HTTP (embedded default)', lines };
  } finally {
    if (rssTimer) clearInterval(rssTimer);
    agent.destroy();
    await closeServer(bare);
    await started?.stop();
  }
}


/** A JSON sample signed as the device library signs it (sdk-reference 4.1); `n` makes it unique. */
function smallSample(hmacKey: string, n: number): string {
  const values = Array.from({ length: ROWS }, (_, row) => [n + row / 10, Math.round(Math.sin(n + row) * 1000) / 100, -row * 0.25]);
  const json = JSON.stringify({
    protected: { ver: 'v1', alg: 'HS256', iat: Math.floor(Date.now() / 1000) },
    signature: '0'.repeat(64),
    payload: {
      device_name: 'bench-device',
      device_type: 'BENCH',
      interval_ms: 10,
      sensors: SENSORS.map((name) => ({ name, units: 'm/s2' })),
      values,
    },
  });
  return json.replace('0'.repeat(64), createHmac('sha256', hmacKey).update(json).digest('hex'));
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

/** The ceiling: FILE_BYTES through a write stream, fsynced before it closes. */
async function rawDiskWrite(path: string, chunk: Buffer): Promise<void> {
  const out = createWriteStream(path, { flush: true });
  const closed = once(out, 'close');
  await pipeline(async function* () {
    for (let left = FILE_BYTES; left > 0; left -= chunk.length) yield chunk.subarray(0, Math.min(left, chunk.length));
  }, out);
  await closed;
}

/** One multipart/form-data part named "data" around a read stream of the file: never in memory whole. */
function uploadFile(agent: http.Agent, url: URL, apiKey: string, path: string, fileName: string): Promise<Reply> {
  const boundary = `----bench${randomUUID().replaceAll('-', '')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="data"; filename="${fileName}"\r\nContent-Type: audio/wav\r\n\r\n`, 'latin1');
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1');
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'x-api-key': apiKey,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(head.length + FILE_BYTES + tail.length),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    pipeline(async function* () {
      yield head;
      for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES })) yield chunk as Buffer;
      yield tail;
    }, req).catch(reject);
  });
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

// The load generator of bench/largeUploads.ts, in its own process as real clients are: it writes
// the 100 MB files (streamed to disk, never whole in memory), then for each case sends one large
// file while a loop of small signed uploads runs beside it, and reports timings to the parent over
// the IPC channel. The parent (the service's process) samples its own RSS between `start` and `end`.
import { createHmac, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import http from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { MAX_FILE_BYTES } from '../ingestion/receiveFile';

export interface ClientSetup {
  ingestionUrl: string;
  apiKey: string;
  hmacKey: string;
  dir: string;
}

export interface CaseReport {
  name: string;
  bytes: number;
  status: number;
  answer: string;
  seconds: number;
  /** The same bytes written to a new file in the same folder and fsynced: the ceiling. */
  diskSeconds: number;
  /** Seconds of each small upload answered while the large one was in flight. */
  small: number[];
  smallFailures: number;
}

export type ClientMessage =
  | { kind: 'idle-latency'; small: number[] }
  | { kind: 'start'; name: string }
  | ({ kind: 'end' } & CaseReport)
  | { kind: 'note'; line: string }
  | { kind: 'done' };

type Format = 'json' | 'cbor' | 'csv' | 'wav';
const CONTENT_TYPES: Record<Format, string> = { json: 'application/json', cbor: 'application/cbor', csv: 'text/csv', wav: 'audio/wav' };
/** Just under the 100 MB limit, whatever the row length. */
const TARGET_BYTES = MAX_FILE_BYTES - 4096;
const CHUNK = 1 << 20;
/** Small uploads kept in flight while a large file goes through. */
const SMALL_CONCURRENCY = 2;
const IDLE_SMALL_MS = 2000;
/** Uploads of the WAV file alone, each of a new content; their median ratio is the figure. */
const WAV_ALONE_RUNS = 5;

const send = (message: ClientMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));

process.once('message', (setup: ClientSetup) => {
  run(setup).then(
    () => send({ kind: 'done' }).then(() => process.exit(0)),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
});

async function run(setup: ClientSetup): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const files: Record<Format, string> = {
    json: await writeJson(join(setup.dir, 'large.json'), setup.hmacKey),
    cbor: await writeCbor(join(setup.dir, 'large.cbor'), setup.hmacKey),
    csv: await writeCsv(join(setup.dir, 'large.csv')),
    wav: await writeWav(join(setup.dir, 'large.wav')),
  };
  const base = new URL(setup.ingestionUrl);
  const small = smallUploader(agent, base, setup);
  await send({ kind: 'idle-latency', small: await small.during(sleep(IDLE_SMALL_MS)) });

  const cases: [string, Format, 'data' | 'files'][] = [
    ['JSON via /data', 'json', 'data'],
    ['JSON via /files', 'json', 'files'],
    ['CBOR via /data', 'cbor', 'data'],
    ['CBOR via /files', 'cbor', 'files'],
    ['CSV via /files', 'csv', 'files'],
    ['WAV via /files', 'wav', 'files'],
  ];
  // BENCH_UPLOAD_FORMATS=wav,csv runs only those formats' cases (to look at one figure again).
  const only = process.env.BENCH_UPLOAD_FORMATS?.split(',').map((f) => f.trim().toLowerCase());
  let variant = 0;
  for (const [name, format, route] of cases.filter(([, format]) => !only || only.includes(format))) {
    const path = files[format];
    const { size } = await stat(path);
    const post = () => (route === 'data' ? postBody(agent, base, setup.apiKey, path, size, format) : postMultipart(agent, base, setup.apiKey, path, size, format));
    // Alone first: the upload's own time and memory; then again with small uploads beside it. The
    // WAV file, the one whose ceiling is the disk rather than a parser, is sent alone several times,
    // each a new content (else the blob store finds it stored and syncs nothing), each against a
    // disk copy of its own: one upload's figure varies by a third from run to run here.
    const runs = format === 'wav' ? [...Array.from({ length: WAV_ALONE_RUNS }, () => false), true] : [false, true];
    const ratios: number[] = [];
    const alone: { upload: number; disk: number }[] = [];
    for (const [i, beside] of runs.entries()) {
      if (format === 'wav') await varyWav(path, ++variant);
      const diskSeconds = await timed(() => copyFsynced(path, `${path}.copy`));
      await rm(`${path}.copy`, { force: true });
      await send({ kind: 'start', name });
      const started = performance.now();
      const upload = post();
      const seconds = upload.then(() => (performance.now() - started) / 1000);
      const latencies = beside ? await small.during(upload) : [];
      const reply = await upload;
      const label = beside ? `${name}, small uploads beside it` : runs.length > 2 ? `${name}, alone (${i + 1} of ${runs.length - 1})` : `${name}, alone`;
      if (!beside) {
        ratios.push(diskSeconds / (await seconds));
        alone.push({ upload: await seconds, disk: diskSeconds });
      }
      await send({ kind: 'end', name: label, bytes: size, status: reply.status, answer: reply.text.slice(0, 200), seconds: await seconds, diskSeconds, small: latencies, smallFailures: small.takeFailures() });
    }
    if (ratios.length > 1) {
      const sorted = [...ratios].sort((a, b) => a - b);
      await send({ kind: 'note', line: `${name}, alone: median ratio to the fsync'd disk copy ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} over ${ratios.length} uploads (${sorted.map((r) => r.toFixed(2)).join(', ')})` });
      // The disk copy itself varies up to threefold between runs on a shared disk: each side's best
      // time is the steadiest estimate of what it can do, so their ratio is shown beside the median.
      const bestUpload = Math.min(...alone.map((a) => a.upload));
      const bestDisk = Math.min(...alone.map((a) => a.disk));
      await send({ kind: 'note', line: `${name}, alone: best of ${alone.length} each, upload ${bestUpload.toFixed(2)} s, disk copy ${bestDisk.toFixed(2)} s (slowest ${Math.max(...alone.map((a) => a.disk)).toFixed(2)} s): ratio of the bests ${(bestDisk / bestUpload).toFixed(2)}` });
    }
  }
  agent.destroy();
}

// --- small uploads -----------------------------------------------------------------------------

function smallUploader(agent: http.Agent, base: URL, setup: ClientSetup) {
  let failures = 0;
  let n = 0;
  const one = async (): Promise<number> => {
    const rows = Array.from({ length: 10 }, (_, i) => [i, n, (i * n) % 7]);
    const body = signedJson(setup.hmacKey, `{"name":"a","units":"g"},{"name":"b","units":"g"},{"name":"c","units":"g"}`, JSON.stringify(rows).slice(1, -1), n++);
    const t = performance.now();
    const reply = await request(agent, new URL('/api/training/data', base), { 'x-api-key': setup.apiKey, 'x-file-name': `small.${n}.json`, 'content-type': 'application/json', 'content-length': String(body.length) }, body);
    if (reply.status !== 200) failures++;
    return (performance.now() - t) / 1000;
  };
  return {
    /** Keeps SMALL_CONCURRENCY small uploads in flight until `until` settles; answers each one's seconds. */
    async during(until: Promise<unknown>): Promise<number[]> {
      let over = false;
      void until.then(
        () => (over = true),
        () => (over = true),
      );
      const latencies: number[] = [];
      await Promise.all(
        Array.from({ length: SMALL_CONCURRENCY }, async () => {
          while (!over) latencies.push(await one());
        }),
      );
      return latencies;
    },
    takeFailures(): number {
      const f = failures;
      failures = 0;
      return f;
    },
  };
}

// --- the large files ---------------------------------------------------------------------------

/** `{"protected":...,"signature":"<64 zeros>","payload":{...,"values":[` rows `]}}`, signed in place afterwards. */
function signedJson(hmacKey: string, sensors: string, rows: string, iat: number): Buffer {
  const unsigned = Buffer.from(`{"protected":{"ver":"v1","alg":"HS256","iat":${iat}},"signature":"${'0'.repeat(64)}","payload":{"device_name":"bench","device_type":"BENCH","interval_ms":10,"sensors":[${sensors}],"values":[${rows}]}}`);
  const at = unsigned.indexOf('0'.repeat(64));
  unsigned.write(createHmac('sha256', hmacKey).update(unsigned).digest('hex'), at, 'latin1');
  return unsigned;
}

/** Writes `parts` to `path`, HMAC-ing them on the way when `hmacKey` is given, and puts the signature at `signatureAt`. */
async function writeSigned(path: string, parts: AsyncIterable<Buffer> | Iterable<Buffer>, hmacKey: string | null, signatureAt: number): Promise<string> {
  const hmac = hmacKey === null ? null : createHmac('sha256', hmacKey);
  const out = createWriteStream(path);
  const closed = once(out, 'close');
  await pipeline(async function* () {
    for await (const part of parts) {
      hmac?.update(part);
      yield part;
    }
  }, out);
  await closed;
  if (hmac) {
    const handle = await open(path, 'r+');
    await handle.write(Buffer.from(hmac.digest('hex'), 'latin1'), 0, 64, signatureAt);
    await handle.close();
  }
  return path;
}

/** Rows of three random doubles, as a device library writes them (about 60 bytes a row). */
async function writeJson(path: string, hmacKey: string): Promise<string> {
  const head = Buffer.from(`{"protected":{"ver":"v1","alg":"HS256","iat":${Math.floor(Date.now() / 1000)}},"signature":"${'0'.repeat(64)}","payload":{"device_name":"bench","device_type":"BENCH","interval_ms":10,"sensors":[{"name":"accX","units":"m/s2"},{"name":"accY","units":"m/s2"},{"name":"accZ","units":"m/s2"}],"values":[`);
  const tail = Buffer.from(']}}');
  const signatureAt = head.indexOf('0'.repeat(64));
  function* parts() {
    yield head;
    let written = head.length + tail.length;
    let first = true;
    while (written < TARGET_BYTES - 200) {
      let text = '';
      while (text.length < CHUNK && written + text.length < TARGET_BYTES - 200) {
        text += `${first ? '' : ','}[${Math.random() * 20 - 10},${Math.random() * 20 - 10},${Math.random() * 20 - 10}]`;
        first = false;
      }
      written += text.length;
      yield Buffer.from(text, 'latin1');
    }
    yield tail;
  }
  return writeSigned(path, parts(), hmacKey, signatureAt);
}

/** A definite-length CBOR map, rows of three float64 (28 bytes a row), as the 90 MB file. */
async function writeCbor(path: string, hmacKey: string): Promise<string> {
  const text = (s: string) => {
    const bytes = Buffer.from(s, 'utf8');
    if (bytes.length >= 24) return Buffer.concat([Buffer.from([0x78, bytes.length]), bytes]);
    return Buffer.concat([Buffer.from([0x60 + bytes.length]), bytes]);
  };
  const sensors = Buffer.concat([Buffer.from([0x83]), ...['accX', 'accY', 'accZ'].map((name) => Buffer.concat([Buffer.from([0xa2]), text('name'), text(name), text('units'), text('m/s2')]))]);
  const head0 = Buffer.concat([
    Buffer.from([0xa3]),
    text('protected'), Buffer.from([0xa3]), text('ver'), text('v1'), text('alg'), text('HS256'), text('iat'), Buffer.from([0x1a]), u32(Math.floor(Date.now() / 1000)),
    text('signature'), text('0'.repeat(64)),
    text('payload'), Buffer.from([0xa5]), text('device_name'), text('bench'), text('device_type'), text('BENCH'), text('interval_ms'), Buffer.from([0x0a]),
    text('sensors'), sensors,
    text('values'),
  ]);
  const rows = Math.floor((TARGET_BYTES - head0.length - 5) / 28);
  const head = Buffer.concat([head0, Buffer.from([0x9a]), u32(rows)]);
  const signatureAt = head.indexOf('0'.repeat(64));
  function* parts() {
    yield head;
    const perChunk = Math.floor(CHUNK / 28);
    for (let done = 0; done < rows; ) {
      const count = Math.min(perChunk, rows - done);
      const chunk = Buffer.alloc(count * 28);
      for (let r = 0; r < count; r++) {
        chunk[r * 28] = 0x83;
        for (let c = 0; c < 3; c++) {
          chunk[r * 28 + 1 + c * 9] = 0xfb;
          chunk.writeDoubleBE(Math.random() * 20 - 10, r * 28 + 2 + c * 9);
        }
      }
      done += count;
      yield chunk;
    }
  }
  return writeSigned(path, parts(), hmacKey, signatureAt);
}

async function writeCsv(path: string): Promise<string> {
  function* parts() {
    const head = Buffer.from('timestamp,accX,accY,accZ\n');
    yield head;
    let written = head.length;
    let t = 0;
    while (written < TARGET_BYTES - 200) {
      let text = '';
      while (text.length < CHUNK && written + text.length < TARGET_BYTES - 200) {
        text += `${t},${(Math.random() * 20 - 10).toFixed(5)},${(Math.random() * 20 - 10).toFixed(5)},${(Math.random() * 20 - 10).toFixed(5)}\n`;
        t += 10;
      }
      written += text.length;
      yield Buffer.from(text, 'latin1');
    }
  }
  return writeSigned(path, parts(), null, 0);
}

async function writeWav(path: string): Promise<string> {
  const dataBytes = TARGET_BYTES - 44;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(dataBytes + 36, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(16_000, 24);
  header.writeUInt32LE(32_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  const noise = Buffer.alloc(CHUNK);
  for (let i = 0; i + 1 < noise.length; i += 2) noise.writeInt16LE(Math.round(3000 * Math.sin(i / 7)), i);
  function* parts() {
    yield header;
    for (let left = dataBytes; left > 0; left -= noise.length) yield noise.subarray(0, Math.min(left, noise.length));
  }
  return writeSigned(path, parts(), null, 0);
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value);
  return b;
}

// --- HTTP ----------------------------------------------------------------------------------------

interface Reply {
  status: number;
  text: string;
}

function request(agent: http.Agent, url: URL, headers: Record<string, string>, body: Buffer | (() => AsyncIterable<Buffer>)): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (Buffer.isBuffer(body)) req.end(body);
    else pipeline(body(), req).catch(reject);
  });
}

function postBody(agent: http.Agent, base: URL, apiKey: string, path: string, size: number, format: Format): Promise<Reply> {
  const headers = { 'x-api-key': apiKey, 'x-file-name': `large.${randomUUID().slice(0, 8)}.${format}`, 'content-type': CONTENT_TYPES[format], 'content-length': String(size) };
  return request(agent, new URL('/api/training/data', base), headers, () => createReadStream(path, { highWaterMark: CHUNK }) as AsyncIterable<Buffer>);
}

function postMultipart(agent: http.Agent, base: URL, apiKey: string, path: string, size: number, format: Format): Promise<Reply> {
  const boundary = `----bench${randomUUID().replaceAll('-', '')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="data"; filename="large.${randomUUID().slice(0, 8)}.${format}"\r\nContent-Type: ${CONTENT_TYPES[format]}\r\n\r\n`, 'latin1');
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1');
  const headers = { 'x-api-key': apiKey, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) };
  return request(agent, new URL('/api/training/files', base), headers, async function* () {
    yield head;
    for await (const chunk of createReadStream(path, { highWaterMark: CHUNK })) yield chunk as Buffer;
    yield tail;
  });
}

async function copyFsynced(from: string, to: string): Promise<void> {
  const out = createWriteStream(to, { flush: true });
  const closed = once(out, 'close');
  await pipeline(createReadStream(from, { highWaterMark: CHUNK }), out);
  await closed;
}

async function timed(work: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await work();
  return (performance.now() - t) / 1000;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Makes the WAV file a new content: its first two samples (just past the 44-byte header) carry `n`. */
async function varyWav(path: string, n: number): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.write(u32(n), 0, 4, 44);
  } finally {
    await handle.close();
  }
}

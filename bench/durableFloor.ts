// The least a durable ingestion of signed samples must do, as one Koa handler: the second ceiling of
// the `/data` figure, between bare Koa (reads the body, does nothing) and the service. It reads the
// body, parses it, checks its HMAC as the service does (over the text with the signature zeroed),
// hashes it, and appends one row holding an event and the sample's bytes to one SQLite file
// (WAL, synchronous=FULL), the rows of one turn of the event loop committed together; it answers
// once its row is durable. No streams, no read models, no history: what the service adds to this is
// its own cost.
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import Database from 'better-sqlite3';
import Koa from 'koa';

interface Queued {
  row: [string, string, Buffer];
  done: (error?: unknown) => void;
}

/**
 * The floor's storage: one table of rows holding an event and the sample's bytes, in one SQLite file
 * (WAL, synchronous=FULL); the rows of one turn of the event loop are committed together, and an
 * append resolves once its row is durable.
 */
export function floorLog(file: string): { append(stream: string, event: string, sample: Buffer): Promise<void>; close(): void } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, stream TEXT NOT NULL UNIQUE, data TEXT NOT NULL, sample BLOB NOT NULL)');
  const insert = db.prepare<[string, string, Buffer]>('INSERT INTO events (stream, data, sample) VALUES (?, ?, ?)');
  const commit = db.transaction((rows: readonly Queued[]) => {
    for (const r of rows) insert.run(...r.row);
  });
  let queued: Queued[] = [];
  const flush = () => {
    const batch = queued;
    queued = [];
    try {
      commit(batch);
    } catch (error) {
      for (const r of batch) r.done(error);
      return;
    }
    for (const r of batch) r.done();
  };
  return {
    append: (stream, event, sample) =>
      new Promise<void>((resolve, reject) => {
        if (queued.length === 0) setImmediate(flush);
        queued.push({ row: [stream, event, sample], done: (error) => (error === undefined ? resolve() : reject(error)) });
      }),
    close() {
      flush();
      db.close();
    },
  };
}

export function durableFloor(file: string, hmacKey: string): { callback: http.RequestListener; close(): void } {
  const log = floorLog(file);
  const app = new Koa();
  app.use(async (ctx) => {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const text = body.toString('utf8');
    let sample: { signature?: unknown; payload?: { values?: unknown } } | undefined;
    try {
      sample = JSON.parse(text) as typeof sample;
    } catch {
      sample = undefined;
    }
    const signature = sample?.signature;
    const values = sample?.payload?.values;
    if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature) || !Array.isArray(values)) return ctx.throw(400, 'not a signed sample');
    const mac = createHmac('sha256', hmacKey).update(text.replace(signature, '0'.repeat(64))).digest();
    if (!timingSafeEqual(mac, Buffer.from(signature, 'hex'))) ctx.throw(400, 'bad signature');
    const fileName = decodeURIComponent(ctx.get('x-file-name'));
    const sha256 = createHash('sha256').update(body).digest('hex');
    const event = JSON.stringify({ type: 'SampleIngested', id: randomUUID(), data: { sha256, fileName, rows: values.length, at: new Date().toISOString() } });
    await log.append(`sample-${randomUUID()}`, event, body);
    ctx.type = 'text/plain';
    ctx.body = fileName;
  });
  return {
    callback: app.callback(),
    close: () => log.close(),
  };
}

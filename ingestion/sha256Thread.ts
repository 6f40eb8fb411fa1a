// The SHA-256 of a received file, computed on a worker thread while the file arrives: hashing was
// a quarter of the event loop's time for a 100 MB upload, and there it held up the reading of the
// socket and every other request. One thread serves every upload of the process (each hash has an
// id). Chunks reach it through a ring of shared memory, copied in as they come, so nothing is
// allocated per chunk and what waits to be hashed is bounded by the ring, whatever the files' sizes
// and however many arrive at once: an upload whose chunk finds the ring full waits for the thread.
// Without a thread (it could not start, or it died) hashing falls back to the event loop: slower,
// never wrong.
import { createHash, type Hash } from 'node:crypto';
import { Worker } from 'node:worker_threads';

/** The shared ring; a chunk larger than half of it goes in pieces. */
export const RING_BYTES = 8 * 1024 * 1024;
const MAX_PIECE = RING_BYTES / 2;
/**
 * The thread says how far it is every this many bytes (and with each digest). Less than the ring
 * less a piece, so a writer waiting for room always has an answer coming.
 */
const ACK_BYTES = 1024 * 1024;

// Plain CommonJS, evaluated: it runs the same under the TypeScript loader and compiled.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const ring = workerData.ring;
const hashes = new Map();
let consumed = 0;
let acked = 0;
parentPort.on('message', ({ id, at, length, end }) => {
  let hash = hashes.get(id);
  if (!hash) hashes.set(id, (hash = createHash('sha256')));
  if (length !== undefined) {
    hash.update(new Uint8Array(ring, at, length));
    consumed += length;
  }
  if (end === 'digest') {
    hashes.delete(id);
    parentPort.postMessage({ consumed: (acked = consumed), id, digest: hash.digest('hex') });
  } else if (end === 'abandon') {
    hashes.delete(id);
  } else if (consumed - acked >= ${ACK_BYTES}) {
    parentPort.postMessage({ consumed: (acked = consumed) });
  }
});
`;

/** The thread a hash was on ended (a crash): the hash is lost, though the bytes were fine. */
export class HashingThreadEnded extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HashingThreadEnded';
  }
}

export interface StreamingSha256 {
  /** Hands a chunk over, copied; resolves at once unless the ring is full. */
  update(chunk: Buffer): Promise<void> | undefined;
  digest(): Promise<string>;
  /** Drops the hash (an upload that failed); after its digest, does nothing. */
  abandon(): void;
}

class Sha256Thread {
  private worker: Worker | undefined;
  private ring: Uint8Array<ArrayBufferLike> = new Uint8Array(0);
  private nextId = 1;
  /** Bytes copied into the ring, and bytes the thread has said it hashed. */
  private written = 0;
  private consumed = 0;
  /** Chunks waiting for room, first come first copied. */
  private readonly roomWaiters: (() => void)[] = [];
  private readonly digests = new Map<number, { resolve: (digest: string) => void; reject: (error: Error) => void }>();
  /** Hashes started and not yet digested or dropped: the thread is held (ref) while there are any. */
  private open = 0;
  private failure: Error | undefined;

  private thread(): Worker {
    if (this.worker) return this.worker;
    const shared = new SharedArrayBuffer(RING_BYTES);
    const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: { ring: shared } });
    worker.on('message', ({ consumed, id, digest }: { consumed: number; id?: number; digest?: string }) => {
      this.consumed = consumed;
      this.wakeWriters();
      if (id === undefined || digest === undefined) return;
      const waiting = this.digests.get(id);
      this.digests.delete(id);
      waiting?.resolve(digest);
    });
    const fail = (cause: Error) => {
      if (this.worker !== worker) return;
      const error = new HashingThreadEnded(`the hashing thread ended: ${cause.message}`);
      this.worker = undefined;
      this.failure = error;
      for (const waiting of this.digests.values()) waiting.reject(error);
      this.digests.clear();
      for (const wake of this.roomWaiters.splice(0)) wake();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
    // Held while a hash is open, and never else: an idle thread does not keep a process alive.
    // (After the listeners: adding one holds it again. A thread started anew after one died may
    // start with hashes of the old one still open.)
    if (this.open === 0) worker.unref();
    this.worker = worker;
    this.ring = new Uint8Array(shared);
    this.written = 0;
    this.consumed = 0;
    this.failure = undefined;
    return worker;
  }

  private wakeWriters(): void {
    while (this.roomWaiters.length > 0) this.roomWaiters.shift()!();
  }

  private opened(): void {
    if (this.open++ === 0) this.worker?.ref();
  }

  private closed(): void {
    if (--this.open === 0) this.worker?.unref();
  }

  start(): StreamingSha256 {
    let worker: Worker;
    try {
      worker = this.thread();
    } catch {
      return inline(createHash('sha256'));
    }
    const id = this.nextId++;
    this.opened();
    // The thread this hash began on is gone (it died): its state is lost, the hash fails.
    const throwIfGone = () => {
      if (this.worker !== worker) throw this.failure ?? new HashingThreadEnded('the hashing thread ended');
    };
    let done = false;
    const finish = () => {
      if (done) return false;
      done = true;
      this.closed();
      return true;
    };
    // Copies a piece that has room now; a piece that would cross the ring's end goes in two.
    const copyNow = (piece: Buffer) => {
      // Dropped meanwhile: the thread has let the hash go, and must not start it again.
      if (done) return;
      const at = this.written % RING_BYTES;
      const first = Math.min(piece.length, RING_BYTES - at);
      this.ring.set(piece.subarray(0, first), at);
      worker.postMessage({ id, at, length: first });
      if (first < piece.length) {
        this.ring.set(piece.subarray(first), 0);
        worker.postMessage({ id, at: 0, length: piece.length - first });
      }
      this.written += piece.length;
    };
    const copyWhenRoom = async (chunk: Buffer) => {
      for (let offset = 0; offset < chunk.length; offset += MAX_PIECE) {
        const piece = chunk.subarray(offset, offset + MAX_PIECE);
        await this.room(piece.length);
        throwIfGone();
        copyNow(piece);
      }
    };
    // The chunks of one hash are copied in order: one that must wait holds up the ones after it.
    let queue: Promise<void> = Promise.resolve();
    let queued = 0;
    return {
      update: (chunk) => {
        throwIfGone();
        // The common case, with nothing queued and room in the ring: copied now, nothing to wait for.
        if (queued === 0 && this.roomWaiters.length === 0 && chunk.length <= MAX_PIECE && this.hasRoom(chunk.length)) {
          copyNow(chunk);
          return undefined;
        }
        queued++;
        queue = queue.then(() => copyWhenRoom(chunk)).finally(() => queued--);
        return queue;
      },
      digest: async () => {
        await queue;
        throwIfGone();
        try {
          return await new Promise<string>((resolve, reject) => {
            this.digests.set(id, { resolve, reject });
            worker.postMessage({ id, end: 'digest' });
          });
        } finally {
          finish();
        }
      },
      abandon: () => {
        if (!finish()) return;
        if (this.worker === worker) worker.postMessage({ id, end: 'abandon' });
      },
    };
  }

  /** Ends the thread as a crash would: the hashes open on it fail, the next hash starts a new one. */
  async end(): Promise<void> {
    await this.worker?.terminate();
  }

  private hasRoom(bytes: number): boolean {
    return RING_BYTES - (this.written - this.consumed) >= bytes;
  }

  /** Undefined when `bytes` fit in the ring now (or there is no thread to wait for), else a wait for the thread to free room. */
  private room(bytes: number): Promise<void> | undefined {
    if (this.hasRoom(bytes) || !this.worker) return undefined;
    return new Promise<void>((resolve) => this.roomWaiters.push(resolve)).then(() => this.room(bytes));
  }
}

function inline(hash: Hash): StreamingSha256 {
  return {
    update: (chunk) => void hash.update(chunk),
    digest: async () => hash.digest('hex'),
    abandon: () => {},
  };
}

const shared = new Sha256Thread();

/** A SHA-256 computed off the event loop, of the chunks in the order they are handed over. */
export function streamingSha256(): StreamingSha256 {
  return shared.start();
}

/** For tests: ends the hashing thread as a crash would. */
export function endHashingThread(): Promise<void> {
  return shared.end();
}

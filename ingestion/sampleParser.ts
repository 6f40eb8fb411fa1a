// Parsing a sample file can take long and much memory (a 50 MB CBOR or JSON acquisition file is
// decoded whole). Files received on disk (over 1 MB) are parsed in a worker thread instead: the
// event loop keeps serving other requests, one large parse runs at a time, and the worker's heap
// is capped, so a file too big to parse fails alone with a clear error instead of stalling or
// exhausting the service. Small bodies, already in memory, are parsed in place.
import { Worker } from 'node:worker_threads';
import { decodeValues } from '../domain/sample/formats/decodeValues';
import { detectContent, parseSampleFile } from '../domain/sample/formats/detectFormat';
import { SampleFormatError, type ParsedSample } from '../domain/sample/formats/sampleFormat';
import type { ReceivedFile } from './receiveFile';

export interface ParseJob {
  kind: 'parse';
  id: number;
  path: string;
  size: number;
  fileName: string;
  declaredType: string | null;
  hmacKeys: string[];
}

/** The first `max` value rows of a stored JSON, CBOR or CSV file, for the raw-data view. */
export interface ValuesJob {
  kind: 'values';
  id: number;
  bytes: ArrayBuffer;
  contentType: string;
  max: number;
}

export type ParseReply =
  | { id: number; ok: true; parsed: ParsedSample }
  | { id: number; ok: true; values: number[][] }
  | { id: number; ok: false; formatError: string }
  | { id: number; ok: false; failure: string };

/** Heap of the parse worker; the largest acquisition files (100 MB of JSON) need about 1.2 GB. */
export const PARSE_WORKER_HEAP_MB = 2048;

interface Pending {
  job: ParseJob | ValuesJob;
  /** Named in errors. */
  what: string;
  resolve: (result: ParsedSample | number[][]) => void;
  reject: (error: unknown) => void;
}

/** Bodies this small are decoded in place: a worker round trip would cost more. */
const IN_PLACE_BYTES = 1024 * 1024;

export class SampleParser {
  private worker: Worker | undefined;
  private running: Pending | undefined;
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly heapMb = PARSE_WORKER_HEAP_MB) {}

  async parse(file: ReceivedFile, fileName: string, declaredType: string | null, hmacKeys: readonly string[]): Promise<ParsedSample> {
    if (file.path === undefined || !(await this.decodedWhole(file))) {
      const source = file.source();
      return parseSampleFile({ source, fileName, declaredType, hmacKeys }).finally(() => source.close());
    }
    if (this.closed) throw new Error('The sample parser is closed');
    const job: ParseJob = { kind: 'parse', id: this.nextId++, path: file.path, size: file.size, fileName, declaredType, hmacKeys: [...hmacKeys] };
    return this.submit(job, fileName) as Promise<ParsedSample>;
  }

  /** The first `max` value rows of a whole JSON, CBOR or CSV file; large ones are decoded in the worker. */
  async values(bytes: Buffer, contentType: string, max: number): Promise<number[][]> {
    if (bytes.length <= IN_PLACE_BYTES) return decodeValues(bytes, contentType, max);
    if (this.closed) throw new Error('The sample parser is closed');
    // A copy the worker can own (the Buffer may share a larger pool).
    const owned = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    const job: ValuesJob = { kind: 'values', id: this.nextId++, bytes: owned, contentType, max };
    return this.submit(job, 'the stored sample') as Promise<number[][]>;
  }

  /**
   * Whether the file's format is decoded whole (JSON, CBOR, CSV): only those go to the worker.
   * WAV, images and videos are read by their headers, cheaply, in place; a file that is none of
   * these is refused in place too, by the same parser.
   */
  private async decodedWhole(file: ReceivedFile): Promise<boolean> {
    const source = file.source();
    try {
      const detection = await detectContent(source);
      return detection.format === 'json' || detection.format === 'cbor' || detection.format === 'csv';
    } catch {
      return false;
    } finally {
      await source.close();
    }
  }

  private submit(job: ParseJob | ValuesJob, what: string): Promise<ParsedSample | number[][]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ job, what, resolve, reject });
      this.startNext();
    });
  }

  private startNext(): void {
    if (this.running) return;
    const next = this.queue.shift();
    if (!next) {
      this.worker?.unref();
      return;
    }
    this.running = next;
    const worker = this.workerForJobs();
    worker.ref();
    worker.postMessage(next.job, next.job.kind === 'values' ? [next.job.bytes] : []);
  }

  private workerForJobs(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./parseWorker.mjs', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb },
    });
    worker.on('message', (reply: ParseReply) => {
      const pending = this.running;
      if (!pending || pending.job.id !== reply.id) return;
      this.running = undefined;
      if (reply.ok) pending.resolve('parsed' in reply ? reply.parsed : reply.values);
      else if ('formatError' in reply) pending.reject(new SampleFormatError(reply.formatError));
      else pending.reject(new Error(`Parsing ${pending.what} failed in the parse worker: ${reply.failure}`));
      this.startNext();
    });
    // The worker died (out of memory, most likely): the file it was parsing fails, the next job gets a new worker.
    const died = (error: unknown): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      const pending = this.running;
      this.running = undefined;
      if (pending) {
        const outOfMemory = (error as { code?: string } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
        pending.reject(
          outOfMemory
            ? new SampleFormatError(`${pending.what} is too complex to parse within the ${this.heapMb} MB allowed for one file; split it into smaller samples`)
            : new Error(`The parse worker stopped while parsing ${pending.what}: ${String(error)}`),
        );
      }
      if (!this.closed) this.startNext();
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`exit code ${code}`)));
    this.worker = worker;
    return worker;
  }

  async close(): Promise<void> {
    this.closed = true;
    const waiting = this.queue.splice(0);
    for (const pending of waiting) pending.reject(new Error('The sample parser is closed'));
    const worker = this.worker;
    this.worker = undefined;
    this.running?.reject(new Error('The sample parser is closed'));
    this.running = undefined;
    await worker?.terminate();
  }
}

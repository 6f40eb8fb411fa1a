// Inside the parse worker: one job at a time, each a received file on disk, answered with the
// parsed sample or the format error a device owner should see.
import { parentPort } from 'node:worker_threads';
import { parseSampleFile } from '../domain/sample/formats/detectFormat';
import { SampleFormatError } from '../domain/sample/formats/sampleFormat';
import { fileSource } from './receiveFile';
import type { ParseJob, ParseReply, ValuesJob } from './sampleParser';
import { decodeValues } from '../domain/sample/formats/decodeValues';

if (!parentPort) throw new Error('parseWorkerMain runs only as a worker');
const port = parentPort;

port.on('message', (job: ParseJob | ValuesJob) => {
  void (job.kind === 'values' ? values(job) : run(job)).then((reply) => port.postMessage(reply));
});

async function values(job: ValuesJob): Promise<ParseReply> {
  try {
    return { id: job.id, ok: true, values: decodeValues(Buffer.from(job.bytes), job.contentType, job.max) };
  } catch (error) {
    if (error instanceof SampleFormatError) return { id: job.id, ok: false, formatError: error.message };
    return { id: job.id, ok: false, failure: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
}

async function run(job: ParseJob): Promise<ParseReply> {
  const source = fileSource(job.path, job.size);
  try {
    const parsed = await parseSampleFile({ source, fileName: job.fileName, declaredType: job.declaredType, hmacKeys: job.hmacKeys });
    return { id: job.id, ok: true, parsed };
  } catch (error) {
    if (error instanceof SampleFormatError) return { id: job.id, ok: false, formatError: error.message };
    return { id: job.id, ok: false, failure: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  } finally {
    await source.close();
  }
}

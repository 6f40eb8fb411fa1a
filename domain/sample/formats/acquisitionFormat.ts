import { MAX_SAMPLE_LENGTH_MS } from '../sampleLimits';
import { AcquisitionReader } from './acquisitionReader';
import { CborTokenizer } from './cborTokenizer';
import type { DocumentTokenizer } from './documentEvents';
import { JsonTokenizer } from './jsonTokenizer';
import { EnoughRows, RowList, type RowSink } from './rowSink';
import { SignatureHasher } from './signatureHasher';
import { Utf8Check } from './utf8Check';
import { SampleFormatError, type ParseInput, type ParsedSample, type SampleSource } from './sampleFormat';

// The Edge Impulse data acquisition format, as JSON or CBOR:
//   {protected: {ver: 'v1', alg: 'HS256'|'none', iat?}, signature: string,
//    payload: {device_name?, device_type?, interval_ms, sensors: [{name, units}], values: number[][]}}
// Read as a stream: the file goes through an incremental tokenizer a chunk at a time, the reader
// checks each field and row as it passes and keeps none of the rows, and the HS256 signature is
// computed over the same chunks (sdk-reference 4.1, see signatureHasher.ts). Memory is the same
// for a 1 KB and a 100 MB file, so a file is accepted or refused the same way every time. A wrong
// signature is not a refusal: the sample is stored and marked invalid, as the real service does.

export { MAX_ACQUISITION_VALUES, MAX_SENSOR_NAME_LENGTH } from './acquisitionReader';

export type AcquisitionEncoding = 'json' | 'cbor';

/** Bytes read at a time: small enough that other requests are served between chunks. */
export const ACQUISITION_CHUNK_BYTES = 256 * 1024;

export async function parseAcquisition(input: ParseInput, encoding: AcquisitionEncoding): Promise<ParsedSample> {
  const hasher = new SignatureHasher(input.hmacKeys);
  const reader = new AcquisitionReader(null, hasher);
  const decoder = new AcquisitionDecoder(reader, encoding);
  for await (const chunk of sourceChunks(input.source)) {
    decoder.write(chunk);
    hasher.update(chunk);
  }
  decoder.end();
  const sample = reader.result();
  const totalLengthMs = sample.rowCount * sample.intervalMs;
  // The reader's ranges make this hold; kept as the last guard before a length enters the log.
  if (!Number.isFinite(totalLengthMs) || totalLengthMs > MAX_SAMPLE_LENGTH_MS) {
    throw new SampleFormatError(`The sample is ${totalLengthMs} ms long; at most ${MAX_SAMPLE_LENGTH_MS} are allowed`);
  }
  return {
    kind: 'time-series',
    contentType: encoding === 'json' ? 'application/json' : 'application/cbor',
    intervalMs: sample.intervalMs,
    frequency: 1000 / sample.intervalMs,
    sensors: sample.sensors,
    valuesCount: sample.rowCount,
    totalLengthMs,
    deviceName: sample.deviceName,
    deviceType: sample.deviceType,
    width: null,
    height: null,
    signature: hasher.result(sample.alg, sample.signature),
  };
}

/**
 * The first `max` value rows of an acquisition file held in memory (one array per time step, one
 * number per sensor; a flat single-sensor list comes back as one-value rows). Reading stops once
 * `max` rows are read; with no `max` the whole file is checked. Throws SampleFormatError as the parser does.
 */
export function readAcquisitionValues(bytes: Uint8Array, encoding: AcquisitionEncoding, max = Number.POSITIVE_INFINITY): number[][] {
  if (max <= 0) return [];
  const rows = new RowList(max);
  readAcquisitionInto(bytes, encoding, rows);
  return rows.rows;
}

/** As readAcquisitionValues, each row handed to `sink` as it is read, until the sink has enough (EnoughRows). */
export function readAcquisitionInto(bytes: Uint8Array, encoding: AcquisitionEncoding, sink: RowSink): void {
  const reader = new AcquisitionReader(sink);
  const decoder = new AcquisitionDecoder(reader, encoding);
  try {
    for (let at = 0; at < bytes.length; at += ACQUISITION_CHUNK_BYTES) decoder.write(bytes.subarray(at, at + ACQUISITION_CHUNK_BYTES));
    decoder.end();
    reader.result();
  } catch (error) {
    if (!(error instanceof EnoughRows)) throw error;
  }
}

/** As readAcquisitionValues, from a stream of the file's bytes (a stored blob), reading no further than needed. */
export async function streamAcquisitionValues(chunks: AsyncIterable<Uint8Array>, encoding: AcquisitionEncoding, max: number): Promise<number[][]> {
  if (max <= 0) return [];
  const rows = new RowList(max);
  const reader = new AcquisitionReader(rows);
  const decoder = new AcquisitionDecoder(reader, encoding);
  try {
    for await (const chunk of chunks) {
      for (let at = 0; at < chunk.length; at += ACQUISITION_CHUNK_BYTES) decoder.write(chunk.subarray(at, at + ACQUISITION_CHUNK_BYTES));
    }
    decoder.end();
    reader.result();
  } catch (error) {
    if (!(error instanceof EnoughRows)) throw error;
  }
  return rows.rows;
}

/** The file's chunks in order, read through its source. */
export async function* sourceChunks(source: SampleSource, chunkBytes = ACQUISITION_CHUNK_BYTES): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < source.size; ) {
    const chunk = await source.read(offset, Math.min(chunkBytes, source.size - offset));
    // A short answer before the end would be read as a truncated file.
    if (chunk.length === 0) throw new Error(`reading at ${offset} of ${source.size} bytes answered nothing`);
    offset += chunk.length;
    yield chunk;
  }
}

/** The tokenizer for the encoding, behind a UTF-8 check for JSON (CBOR checks its text strings itself). */
class AcquisitionDecoder implements DocumentTokenizer {
  private readonly tokenizer: DocumentTokenizer;
  private readonly utf8: Utf8Check | null;

  constructor(reader: AcquisitionReader, encoding: AcquisitionEncoding) {
    this.tokenizer = encoding === 'json' ? new JsonTokenizer(reader) : new CborTokenizer(reader);
    this.utf8 = encoding === 'json' ? new Utf8Check('The JSON file is not valid UTF-8') : null;
  }

  write(chunk: Uint8Array): void {
    this.utf8?.write(chunk);
    this.tokenizer.write(chunk);
  }

  end(): void {
    this.utf8?.end();
    this.tokenizer.end();
  }
}

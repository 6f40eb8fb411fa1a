import type { Readable } from 'node:stream';
import { WHOLE_FILE_VALUE_TYPES } from '../../domain/sample/formats/decodeValues';
import type { SampleSource } from '../../domain/sample/formats/sampleFormat';
import { readWavValues } from '../../domain/sample/formats/wavFormat';
import type { SampleDocument } from '../../projections/samples/sampleDocument';
import type { BlobStore } from '../../stores/blobstore/blobStore';

/** Values shown by the raw-data view unless the caller asks for fewer. */
const DEFAULT_MAX_VALUES = 100_000;

/** Decodes the first `max` value rows of a JSON, CBOR or CSV file from a stream of its bytes, reading no further than they go. */
export type ValuesDecoder = (chunks: AsyncIterable<Uint8Array>, contentType: string, max: number) => Promise<number[][]>;

/**
 * A source over a blob's stream that reads only as far as it is asked: the WAV reader wants the
 * header and the first frames, not the whole (up to 100 MB) file.
 */
function prefixSource(stream: Readable, size: number): SampleSource & { close(): void } {
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let buffered: Buffer = Buffer.alloc(0);
  let ended = false;
  const fill = async (upTo: number) => {
    const chunks: Buffer[] = [buffered];
    let length = buffered.length;
    while (length < upTo && !ended) {
      const next = await iterator.next();
      if (next.done) ended = true;
      else {
        chunks.push(next.value);
        length += next.value.length;
      }
    }
    buffered = Buffer.concat(chunks, length);
  };
  return {
    size,
    async read(offset, length) {
      await fill(offset + length);
      return buffered.subarray(offset, offset + length);
    },
    async readAll() {
      await fill(Number.POSITIVE_INFINITY);
      return buffered;
    },
    close: () => stream.destroy(),
  };
}

/** A sample's payload values, read back from its stored file; images and videos have none. */
export async function readSampleValues(blobs: BlobStore, decode: ValuesDecoder, sample: SampleDocument, limit: number | undefined): Promise<number[][]> {
  const max = Math.max(0, Math.min(limit ?? DEFAULT_MAX_VALUES, DEFAULT_MAX_VALUES));
  if (sample.kind === 'image' || sample.kind === 'video') return [];
  if (sample.contentType === 'audio/wav') {
    const source = prefixSource(await blobs.open(sample.sha256), sample.size);
    try {
      return await readWavValues(source, max);
    } finally {
      source.close();
    }
  }
  if (!(WHOLE_FILE_VALUE_TYPES as readonly string[]).includes(sample.contentType)) return [];
  const stream = await blobs.open(sample.sha256);
  try {
    return await decode(stream, sample.contentType, max);
  } finally {
    // Reading stops at `max` rows: the rest of the file is never read.
    stream.destroy();
  }
}

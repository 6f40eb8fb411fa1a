import type { Readable } from 'node:stream';
import { readAcquisitionValues } from '../../domain/sample/formats/acquisitionFormat';
import { readCsvValues } from '../../domain/sample/formats/csvFormat';
import type { SampleSource } from '../../domain/sample/formats/sampleFormat';
import { readWavValues } from '../../domain/sample/formats/wavFormat';
import type { SampleDocument } from '../../projections/samples/sampleDocument';
import type { BlobStore } from '../../stores/blobstore/blobStore';

/** Values shown by the raw-data view unless the caller asks for fewer. */
const DEFAULT_MAX_VALUES = 100_000;

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const bufferSource = (bytes: Buffer): SampleSource => ({
  size: bytes.length,
  read: async (offset, length) => bytes.subarray(offset, offset + length),
  readAll: async () => bytes,
});

/** A sample's payload values, read back from its stored file; images and videos have none. */
export async function readSampleValues(blobs: BlobStore, sample: SampleDocument, limit: number | undefined): Promise<number[][]> {
  const max = Math.max(0, Math.min(limit ?? DEFAULT_MAX_VALUES, DEFAULT_MAX_VALUES));
  if (sample.kind === 'image' || sample.kind === 'video') return [];
  const bytes = await readAll(await blobs.open(sample.sha256));
  switch (sample.contentType) {
    case 'application/json':
      return readAcquisitionValues(bytes, 'json').slice(0, max);
    case 'application/cbor':
      return readAcquisitionValues(bytes, 'cbor').slice(0, max);
    case 'text/csv':
      return readCsvValues(bytes).slice(0, max);
    case 'audio/wav':
      return readWavValues(bufferSource(bytes), max);
    default:
      return [];
  }
}

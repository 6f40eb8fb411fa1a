import { readAcquisitionValues, streamAcquisitionValues } from './acquisitionFormat';
import { readCsvValues, streamCsvValues } from './csvFormat';

/** Content types whose values are read by decoding the file from its start (unlike WAV, read by offset). */
export const WHOLE_FILE_VALUE_TYPES = ['application/json', 'application/cbor', 'text/csv'] as const;

/** The first `max` value rows of an acquisition JSON, CBOR or CSV file held in memory. */
export function decodeValues(bytes: Buffer, contentType: string, max: number): number[][] {
  switch (contentType) {
    case 'application/json':
      return readAcquisitionValues(bytes, 'json', max);
    case 'application/cbor':
      return readAcquisitionValues(bytes, 'cbor', max);
    case 'text/csv':
      return readCsvValues(bytes, max);
    default:
      return [];
  }
}

/** The first `max` value rows of a stored file, read from its stream only as far as they go. */
export async function streamValues(chunks: AsyncIterable<Uint8Array>, contentType: string, max: number): Promise<number[][]> {
  switch (contentType) {
    case 'application/json':
      return streamAcquisitionValues(chunks, 'json', max);
    case 'application/cbor':
      return streamAcquisitionValues(chunks, 'cbor', max);
    case 'text/csv':
      return streamCsvValues(chunks, max);
    default:
      return [];
  }
}

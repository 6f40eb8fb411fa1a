import { readAcquisitionInto, streamAcquisitionValues } from './acquisitionFormat';
import { readCsvInto, streamCsvValues } from './csvFormat';
import { RowList, type RowSink } from './rowSink';

/** Content types whose values are read by decoding the file from its start (unlike WAV, read by offset). */
export const WHOLE_FILE_VALUE_TYPES = ['application/json', 'application/cbor', 'text/csv'] as const;

/** The first `max` value rows of an acquisition JSON, CBOR or CSV file held in memory. */
export function decodeValues(bytes: Buffer, contentType: string, max: number): number[][] {
  if (max <= 0) return [];
  const rows = new RowList(max);
  decodeValuesInto(bytes, contentType, rows);
  return rows.rows;
}

/** The value rows of an acquisition JSON, CBOR or CSV file held in memory, handed to `sink` one by one until it has enough. */
export function decodeValuesInto(bytes: Buffer, contentType: string, sink: RowSink): void {
  switch (contentType) {
    case 'application/json':
      return readAcquisitionInto(bytes, 'json', sink);
    case 'application/cbor':
      return readAcquisitionInto(bytes, 'cbor', sink);
    case 'text/csv':
      return readCsvInto(bytes, sink);
    default:
      return;
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

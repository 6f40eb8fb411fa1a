import { readAcquisitionValues } from './acquisitionFormat';
import { readCsvValues } from './csvFormat';

/** Content types whose values are read by decoding the whole file (unlike WAV, read by offset). */
export const WHOLE_FILE_VALUE_TYPES = ['application/json', 'application/cbor', 'text/csv'] as const;

/** The first `max` value rows of an acquisition JSON, CBOR or CSV file. */
export function decodeValues(bytes: Buffer, contentType: string, max: number): number[][] {
  switch (contentType) {
    case 'application/json':
      return readAcquisitionValues(bytes, 'json').slice(0, max);
    case 'application/cbor':
      return readAcquisitionValues(bytes, 'cbor').slice(0, max);
    case 'text/csv':
      return readCsvValues(bytes).slice(0, max);
    default:
      return [];
  }
}

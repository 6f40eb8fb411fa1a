// What the incremental JSON and CBOR tokenizers tell the acquisition reader, in document order:
// the same events for both encodings, so one reader validates both. Nothing here holds more than
// a bounded prefix of any string, so a hostile file cannot make a tokenizer grow with its size.

import { SampleFormatError } from './sampleFormat';

/** Characters of a string kept as text; the rest is only counted (enough for every field's limit and for messages). */
export const KEPT_STRING_CHARS = 1024;

/** A string as the reader sees it: its first KEPT_STRING_CHARS characters and its whole length. */
export interface StringToken {
  kind: 'string';
  /** The string, or its first KEPT_STRING_CHARS UTF-16 code units when `length` is larger. */
  text: string;
  /** Length in UTF-16 code units, as JavaScript counts it. */
  length: number;
}

/** A value that is none of the above: a CBOR byte string, a big integer, a simple value... described for messages. */
export interface OtherToken {
  kind: 'other';
  description: string;
}

export type Scalar = number | boolean | null | undefined | StringToken | OtherToken;

export interface DocumentSink {
  beginObject(): void;
  endObject(): void;
  beginArray(): void;
  endArray(): void;
  /** An object member's name; the member's value follows. */
  key(name: StringToken): void;
  /** A CBOR map key that is not text (its item is skipped; a value follows). */
  nonTextKey(): void;
  /** A CBOR tag: the next item is tagged. */
  tag(tag: number | bigint): void;
  value(scalar: Scalar): void;
  /**
   * A string value's content begins at byte `offset` of the file (after the JSON quote or the CBOR
   * head); `definite` is false for CBOR indefinite-length strings, whose bytes are not contiguous.
   */
  stringStart(offset: number, definite: boolean): void;
  /** The string value that began last ends before byte `offset` (the JSON closing quote, the CBOR item's end). */
  stringEnd(offset: number): void;
}

/** An incremental decoder: bytes in any chunking, then end(). */
export interface DocumentTokenizer {
  write(chunk: Uint8Array): void;
  end(): void;
}

export function malformed(encoding: 'JSON' | 'CBOR', message: string): SampleFormatError {
  return new SampleFormatError(`Malformed ${encoding}: ${message}`);
}

/** UTF-16 length of UTF-8 bytes [from, to): one unit per sequence, two for four-byte sequences. */
export function utf16Length(bytes: Uint8Array, from: number, to: number): number {
  let units = 0;
  for (let i = from; i < to; i++) {
    const b = bytes[i]!;
    if ((b & 0xc0) !== 0x80) units += b >= 0xf0 ? 2 : 1;
  }
  return units;
}

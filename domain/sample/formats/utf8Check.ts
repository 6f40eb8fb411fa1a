import { isUtf8 } from 'node:buffer';
import { SampleFormatError } from './sampleFormat';

/**
 * Checks that a stream of chunks is valid UTF-8, whatever the chunking: a sequence cut by a chunk's
 * end is carried (at most three bytes) to the next. node:buffer's isUtf8 (simdutf) does the
 * checking; measured 26 ms per 100 MB against 375 ms for a streaming fatal TextDecoder.
 */
/** Shared: a carry is replaced, never written into, and a new empty Buffer per check was 2% of an upload. */
const NOTHING = Buffer.alloc(0);

export class Utf8Check {
  private carry: Buffer = NOTHING;

  constructor(private readonly message: string) {}

  write(chunk: Uint8Array): void {
    let rest = chunk;
    if (this.carry.length > 0) {
      const need = sequenceLength(this.carry[0]!) - this.carry.length;
      if (chunk.length < need) {
        this.carry = Buffer.concat([this.carry, chunk]);
        return;
      }
      this.check(Buffer.concat([this.carry, chunk.subarray(0, need)]));
      this.carry = NOTHING;
      rest = chunk.subarray(need);
    }
    const cut = incompleteTail(rest);
    this.check(rest.subarray(0, cut));
    if (cut < rest.length) this.carry = Buffer.from(rest.subarray(cut));
  }

  end(): void {
    if (this.carry.length > 0) throw new SampleFormatError(this.message);
  }

  private check(bytes: Uint8Array): void {
    if (!isUtf8(bytes)) throw new SampleFormatError(this.message);
  }
}

/** Bytes of the sequence a lead byte starts (1 for bytes that start none: isUtf8 refuses those). */
function sequenceLength(lead: number): number {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}

/** Where a multi-byte sequence that the end of `bytes` cuts begins; bytes.length when none is cut. */
function incompleteTail(bytes: Uint8Array): number {
  const length = bytes.length;
  for (let back = 1; back <= Math.min(3, length); back++) {
    const byte = bytes[length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    return byte >= 0xc0 && sequenceLength(byte) > back ? length - back : length;
  }
  return length;
}

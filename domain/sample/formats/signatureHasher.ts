import { createHmac, timingSafeEqual, type Hmac } from 'node:crypto';
import type { StringToken } from './documentEvents';
import type { SignatureSpanListener } from './acquisitionReader';
import type { SignatureCheck } from './sampleFormat';

// The HS256 check of an acquisition file, computed while it streams past (sdk-reference 4.1): the
// HMAC-SHA256 of the file's raw bytes with the signature's own bytes turned back into ASCII '0's,
// compared with the signature as lowercase hex. The reader says where the signature's text starts
// and ends as the tokenizer meets it; each chunk is hashed only after the tokenizer has read it, so
// the range is known by then, even when it straddles chunks.

const ZEROS = Buffer.alloc(64 * 1024, 0x30);

export class SignatureHasher implements SignatureSpanListener {
  private readonly hmacs: Hmac[];
  /** File offset of the next byte to hash. */
  private offset = 0;
  private from = -1;
  private to = Number.POSITIVE_INFINITY;
  /** The signature's bytes are one contiguous run (not a CBOR indefinite-length string). */
  private usable = false;

  constructor(keys: readonly string[]) {
    this.hmacs = keys.map((key) => createHmac('sha256', key));
  }

  start(offset: number, definite: boolean): void {
    this.from = offset;
    this.usable = definite;
  }

  end(offset: number): void {
    this.to = offset;
  }

  /** Hashes a chunk the tokenizer has finished reading. */
  update(chunk: Uint8Array): void {
    if (this.hmacs.length === 0) return;
    const start = this.offset;
    this.offset += chunk.length;
    const zeroFrom = Math.max(0, this.from - start);
    const zeroTo = Math.min(chunk.length, this.to - start);
    if (this.from < 0 || zeroFrom >= chunk.length || zeroTo <= 0) return this.feed(chunk);
    this.feed(chunk.subarray(0, zeroFrom));
    for (let left = zeroTo - zeroFrom; left > 0; left -= ZEROS.length) this.feed(ZEROS.subarray(0, Math.min(left, ZEROS.length)));
    this.feed(chunk.subarray(zeroTo));
  }

  /** The check once the file is read; `signature` is the document's signature value. */
  result(alg: 'HS256' | 'none', signature: StringToken): SignatureCheck {
    if (alg === 'none') return { method: 'none', valid: false };
    const given = Buffer.from(signature.text, 'utf8');
    if (!this.usable || signature.length !== signature.text.length || given.length !== 64) return { method: 'HS256', valid: false, keyIndex: null };
    let keyIndex: number | null = null;
    this.hmacs.forEach((hmac, ix) => {
      const expected = Buffer.from(hmac.digest('hex'), 'ascii');
      if (timingSafeEqual(expected, given) && keyIndex === null) keyIndex = ix;
    });
    return { method: 'HS256', valid: keyIndex !== null, keyIndex };
  }

  private feed(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    for (const hmac of this.hmacs) hmac.update(bytes);
  }
}

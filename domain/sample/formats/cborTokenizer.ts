// An incremental CBOR (RFC 8949) decoder that turns one data item, fed in chunks of any size, into
// DocumentSink events without building it: memory stays bounded by the nesting limit, whatever
// the file's size. None of the well-kept libraries decodes one large item incrementally (cbor-x's
// and cbor's streams emit whole top-level items; cborg tokenises a complete buffer), and decoding
// whole is what cost 2.5 GB for a 90 MB file.
//
// Kept from the decoder used before (`cbor`, decodeFirstSync with max_depth, preventDuplicateKeys
// and no tag conversions): nesting deeper than the limit, duplicate text keys in a map, reserved
// additional information, misplaced break codes, invalid UTF-8 in text, truncated items and bytes
// after the item are all refused; tags are reported, never interpreted.
import { createHash, type Hash } from 'node:crypto';
import { KEPT_STRING_CHARS, malformed, type DocumentSink, type DocumentTokenizer, type Scalar } from './documentEvents';

/** Deep enough for the format (root map → payload → values → row is 4), far from trouble. */
export const CBOR_MAX_DEPTH = 16;
/** Entries one map may hold: the format's maps hold a handful; this bounds the duplicate-key sets. */
export const CBOR_MAX_MAP_ENTRIES = 4096;
/** Keys up to this many bytes are remembered as text for the duplicate check; longer ones by digest. */
const KEY_TEXT_BYTES = 256;

const ARRAY = 1;
const MAP = 2;
const INDEFINITE = -1;

const fail = (message: string) => malformed('CBOR', message);

export class CborTokenizer implements DocumentTokenizer {
  /** File offset of the next byte to be written. */
  private offset = 0;
  private done = false;

  // Open containers, innermost last. `left` counts items still expected (maps: keys and values), or INDEFINITE.
  private readonly kind = new Uint8Array(CBOR_MAX_DEPTH + 1);
  private readonly left = new Float64Array(CBOR_MAX_DEPTH + 1);
  /** Items read so far in each container (maps: even = the next is a key). */
  private readonly count = new Float64Array(CBOR_MAX_DEPTH + 1);
  private readonly keys: Array<Set<string> | undefined> = [];
  private depth = 0;
  /** Depth at which events stop being reported (inside a non-text map key), or -1. */
  private silentFrom = -1;
  private tagged = false;

  // A head cut by a chunk boundary.
  private readonly head = new Uint8Array(9);
  private headHave = 0;
  private headNeed = 0;

  // A string's content being read.
  private stringLeft = 0;
  private stringMajor = 0;
  /** Inside an indefinite-length string (a run of definite chunks up to a break). */
  private chunkedString = false;
  private stringIsKey = false;
  private stringReported = false;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  private text = '';
  private textLength = 0;
  private keyBytes = 0;
  private keyDigest: Hash | undefined;

  constructor(private readonly sink: DocumentSink) {}

  write(chunk: Uint8Array): void {
    const n = chunk.length;
    const view = new DataView(chunk.buffer, chunk.byteOffset, n);
    let i = 0;
    while (i < n) {
      if (this.stringLeft > 0) {
        const take = Math.min(this.stringLeft, n - i);
        this.stringContent(chunk, i, i + take);
        i += take;
        this.stringLeft -= take;
        if (this.stringLeft === 0 && !this.chunkedString) this.finishString(this.offset + i);
        continue;
      }
      if (this.headNeed > 0) {
        const take = Math.min(this.headNeed - this.headHave, n - i);
        this.head.set(chunk.subarray(i, i + take), this.headHave);
        this.headHave += take;
        i += take;
        if (this.headHave < this.headNeed) continue;
        this.headNeed = 0;
        this.item(this.head, new DataView(this.head.buffer), 0, this.offset + i);
        continue;
      }
      if (this.done) throw fail(`bytes follow the data item (from byte ${this.offset + i})`);
      const size = headSize(chunk[i]!);
      if (i + size > n) {
        this.head.set(chunk.subarray(i, n), 0);
        this.headHave = n - i;
        this.headNeed = size;
        i = n;
        continue;
      }
      i += size;
      this.item(chunk, view, i - size, this.offset + i);
    }
    this.offset += n;
  }

  end(): void {
    if (this.offset === 0) throw fail('the file is empty');
    if (!this.done) throw fail(`the file ends inside a data item (after ${this.offset} bytes)`);
  }

  /** One head at bytes[at...] (its size already checked); `next` is the file offset just after it. */
  private item(bytes: Uint8Array, view: DataView, at: number, next: number): void {
    const initial = bytes[at]!;
    const major = initial >> 5;
    const info = initial & 0x1f;
    if (info >= 28 && info <= 30) throw fail(`reserved additional information ${info} at byte ${next - headSize(initial)}`);

    if (info === 31) {
      if (major === 7) return this.breakCode(next);
      if (this.chunkedString) throw fail('an indefinite-length string holds another indefinite-length item');
      if (major === 2 || major === 3) return this.beginString(major, 0, true, next);
      if (major === 4 || major === 5) return this.open(major === 4 ? ARRAY : MAP, INDEFINITE);
      throw fail(`additional information 31 is not allowed with major type ${major}`);
    }

    const argument = readArgument(bytes, view, at, info);
    if (this.chunkedString) {
      if (major !== this.stringMajor) throw fail('an indefinite-length string holds an item of another type');
      return this.beginString(major, asLength(argument), false, next);
    }
    switch (major) {
      case 0:
        return this.scalar(typeof argument === 'number' ? argument : { kind: 'other', description: `the integer ${argument.toString().slice(0, 40)}` });
      case 1:
        return this.scalar(typeof argument === 'number' && argument < Number.MAX_SAFE_INTEGER ? -1 - argument : { kind: 'other', description: `the integer -${(BigInt(argument) + 1n).toString().slice(0, 40)}` });
      case 2:
      case 3:
        return this.beginString(major, asLength(argument), false, next);
      case 4:
        return this.open(ARRAY, asLength(argument));
      case 5: {
        const pairs = asLength(argument);
        if (pairs > CBOR_MAX_MAP_ENTRIES) throw fail(`a map of ${pairs} entries; at most ${CBOR_MAX_MAP_ENTRIES} are allowed`);
        return this.open(MAP, pairs * 2);
      }
      case 6:
        // A tagged key is not a text key: it is reported as a non-text key, without its tag.
        if (!this.silent && !this.atKey) this.sink.tag(argument);
        this.tagged = true;
        return;
      default:
        return this.scalar(simpleValue(info, argument, view, at));
    }
  }

  private get atKey(): boolean {
    return this.depth > 0 && this.kind[this.depth - 1] === MAP && this.count[this.depth - 1]! % 2 === 0;
  }

  private get silent(): boolean {
    return this.silentFrom !== -1;
  }

  /** Before an item: a non-text key starts a silent stretch. */
  private beforeItem(isText: boolean): boolean {
    const atKey = this.atKey;
    if (atKey && (!isText || this.tagged) && !this.silent) {
      this.sink.nonTextKey();
      this.silentFrom = this.depth;
    }
    return atKey;
  }

  private scalar(value: Scalar): void {
    this.beforeItem(false);
    if (!this.silent) this.sink.value(value);
    this.completeItem();
  }

  private open(kind: number, items: number): void {
    this.beforeItem(false);
    if (this.depth >= CBOR_MAX_DEPTH) throw fail(`nested deeper than the maximum depth of ${CBOR_MAX_DEPTH}`);
    const d = this.depth++;
    this.kind[d] = kind;
    this.left[d] = items;
    this.count[d] = 0;
    this.keys[d] = undefined;
    this.tagged = false;
    if (!this.silent) {
      if (kind === MAP) this.sink.beginObject();
      else this.sink.beginArray();
    }
    if (items === 0) this.close();
  }

  private close(): void {
    const d = --this.depth;
    if (!this.silent) {
      if (this.kind[d] === MAP) this.sink.endObject();
      else this.sink.endArray();
    }
    this.keys[d] = undefined;
    this.completeItem();
  }

  private breakCode(at: number): void {
    if (this.chunkedString) {
      this.chunkedString = false;
      this.finishString(at);
      return;
    }
    const d = this.depth - 1;
    if (d < 0 || this.left[d] !== INDEFINITE || this.tagged) throw fail(`a break code where no indefinite-length item is open (byte ${at - 1})`);
    if (this.kind[d] === MAP && this.count[d]! % 2 === 1) throw fail('a map ends between a key and its value');
    this.close();
  }

  /** After a whole item: count it in its container, closing containers that are now full. */
  private completeItem(): void {
    this.tagged = false;
    if (this.silentFrom === this.depth) this.silentFrom = -1;
    if (this.depth === 0) {
      this.done = true;
      return;
    }
    const d = this.depth - 1;
    this.count[d]! += 1;
    if (this.kind[d] === MAP && this.count[d]! > CBOR_MAX_MAP_ENTRIES * 2) throw fail(`a map of more than ${CBOR_MAX_MAP_ENTRIES} entries`);
    if (this.left[d] !== INDEFINITE && --this.left[d]! === 0) this.close();
  }

  // --- strings --------------------------------------------------------------------------------

  private beginString(major: number, length: number, indefinite: boolean, contentAt: number): void {
    if (!this.chunkedString) {
      // The first (or only) piece: the string as an item.
      const isText = major === 3;
      const tagged = this.tagged;
      this.stringIsKey = this.beforeItem(isText) && isText && !tagged;
      this.stringMajor = major;
      this.stringReported = !this.silent && !this.stringIsKey && isText;
      this.text = '';
      this.textLength = 0;
      this.keyBytes = 0;
      this.keyDigest = undefined;
      if (this.stringReported) this.sink.stringStart(contentAt, !indefinite);
      this.chunkedString = indefinite;
    }
    this.stringLeft = length;
    if (length === 0 && !this.chunkedString) this.finishString(contentAt);
  }

  private stringContent(bytes: Uint8Array, from: number, to: number): void {
    if (this.stringMajor !== 3) return;
    let piece: string;
    try {
      piece = this.decoder.decode(bytes.subarray(from, to), { stream: true });
    } catch {
      throw fail('a text string is not valid UTF-8');
    }
    this.textLength += piece.length;
    if (this.text.length < KEPT_STRING_CHARS) this.text += piece.slice(0, KEPT_STRING_CHARS - this.text.length);
    if (this.stringIsKey) {
      this.keyBytes += to - from;
      if (this.keyBytes > KEY_TEXT_BYTES) (this.keyDigest ??= createHash('sha256').update(this.text)).update(bytes.subarray(from, to));
    }
  }

  private finishString(endAt: number): void {
    if (this.stringMajor === 3) {
      try {
        const rest = this.decoder.decode();
        this.textLength += rest.length;
        if (this.text.length < KEPT_STRING_CHARS) this.text += rest;
      } catch {
        throw fail('a text string is not valid UTF-8');
      }
    }
    if (this.stringIsKey) {
      this.checkDuplicate();
      if (!this.silent) this.sink.key({ kind: 'string', text: this.text, length: this.textLength });
    } else if (this.stringReported) {
      this.sink.stringEnd(endAt);
      this.sink.value({ kind: 'string', text: this.text, length: this.textLength });
    } else if (!this.silent) {
      this.sink.value({ kind: 'other', description: 'a byte string' });
    }
    this.text = '';
    this.completeItem();
  }

  private checkDuplicate(): void {
    const d = this.depth - 1;
    const identity = this.keyDigest ? `#${this.keyDigest.digest('hex')}` : `=${this.text}`;
    const seen = (this.keys[d] ??= new Set());
    if (seen.has(identity)) throw fail(`Duplicate key in a map: ${JSON.stringify(this.text.slice(0, 40))}`);
    seen.add(identity);
  }
}

/** Bytes of the head that starts with `initial`. */
function headSize(initial: number): number {
  const info = initial & 0x1f;
  if (info < 24 || info >= 28) return 1;
  return 1 + (1 << (info - 24));
}

function readArgument(bytes: Uint8Array, view: DataView, at: number, info: number): number | bigint {
  if (info < 24) return info;
  switch (info) {
    case 24:
      return bytes[at + 1]!;
    case 25:
      return view.getUint16(at + 1);
    case 26:
      return view.getUint32(at + 1);
    default: {
      const big = view.getBigUint64(at + 1);
      return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
    }
  }
}

function asLength(argument: number | bigint): number {
  if (typeof argument !== 'number') throw fail(`a length of ${argument} is larger than any file`);
  return argument;
}

function simpleValue(info: number, argument: number | bigint, view: DataView, at: number): Scalar {
  switch (info) {
    case 20:
      return false;
    case 21:
      return true;
    case 22:
      return null;
    case 23:
      return undefined;
    case 25:
      return halfFloat(argument as number);
    case 26:
      return view.getFloat32(at + 1);
    case 27:
      return view.getFloat64(at + 1);
    default:
      return { kind: 'other', description: `the simple value ${String(argument)}` };
  }
}

function halfFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 31) return fraction === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

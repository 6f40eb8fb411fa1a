// Whether some bytes are a whole PNG or JPEG image, and its pixel size. Used for profile photos (a
// buffer of at most 2 MB) and for image samples (a file of up to 100 MB, read a block at a time).
//
// One walk serves both: it is written as a generator that yields the byte ranges it needs and is
// given them back, so the same code runs over a buffer (synchronously, without copies) and over a
// random-access reader (asynchronously, holding one block at a time). The header is decoded by the
// walk itself, following image-size's rules for PNG and JPEG: image-size needs every byte up to a
// JPEG's frame header in one buffer, and that header can lie megabytes in, behind EXIF and ICC
// segments. image-size still names the content that is neither.
import { crc32 } from 'node:zlib';
import { imageSize } from 'image-size';

export type ImageType = 'png' | 'jpeg';

export interface ImageInfo {
  type: ImageType;
  width: number;
  height: number;
}

export const IMAGE_TYPE_NAMES: Record<ImageType, string> = { png: 'PNG', jpeg: 'JPEG' };

/**
 * The content is not a PNG or JPEG (`claimed` null, `detail` says what it is instead: "a GIF image",
 * "not an image"), or it starts like one but is not a whole, valid one (`detail` names the problem).
 * The message reads after "The photo is" / "The image is".
 */
export class ImageFormatError extends Error {
  constructor(
    readonly claimed: ImageType | null,
    readonly detail: string,
  ) {
    super(claimed ? `not a valid ${IMAGE_TYPE_NAMES[claimed]}: ${detail}` : `not a PNG or JPEG image (this file is ${detail})`);
    this.name = 'ImageFormatError';
  }
}

/** Random access to the bytes of a file of `size` bytes; `read` answers fewer bytes only at the end. */
export interface ByteReader {
  size: number;
  read(offset: number, length: number): Promise<Buffer>;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG_SOI = Buffer.from([0xff, 0xd8, 0xff]);

/** The type its first bytes claim, without judging the rest. */
export function claimedImageType(head: Uint8Array): ImageType | null {
  const bytes = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (bytes.subarray(0, 3).equals(JPEG_SOI)) return 'jpeg';
  return null;
}

/**
 * Checks that `bytes` are a whole PNG or JPEG image and answers which, with its size in pixels. The
 * header gives the type and dimensions (PNG: IHDR; JPEG: the first baseline, extended or progressive
 * frame header); the structure is then walked to its end (PNG chunks with their CRCs up to IEND,
 * JPEG segments and scans up to EOI; what follows is ignored), so a truncated or damaged file is
 * refused. Throws ImageFormatError.
 */
export function inspectImage(bytes: Buffer): ImageInfo {
  const walk = imageWalk(bytes.length);
  for (let step = walk.next(); ; ) {
    if (step.done) return step.value;
    const { offset, length } = step.value;
    step = walk.next(bytes.subarray(offset, offset + length));
  }
}

/** inspectImage over a reader: at most one block (256 KB) of the file is held at a time. */
export async function inspectImageFrom(reader: ByteReader): Promise<ImageInfo> {
  const walk = imageWalk(reader.size);
  for (let step = walk.next(); ; ) {
    if (step.done) return step.value;
    step = walk.next(await reader.read(step.value.offset, step.value.length));
  }
}

/** A byte range the walk needs; it is answered with up to `length` bytes (fewer at the end). */
interface Need {
  offset: number;
  length: number;
}
type Walk<T> = Generator<Need, T, Buffer>;

const BLOCK = 256 * 1024;
/** image-size is given at most this much to name a content that is not PNG or JPEG. */
const NAMING_HEAD = 4 * 1024 * 1024;

const HEADER_DAMAGED = 'its header is damaged or the file is truncated';

function* imageWalk(size: number): Walk<ImageInfo> {
  const claimed = claimedImageType(yield { offset: 0, length: 8 });
  if (!claimed) {
    let type: string | undefined;
    try {
      type = imageSize(yield { offset: 0, length: NAMING_HEAD }).type;
    } catch {
      type = undefined;
    }
    throw new ImageFormatError(null, type ? `a ${type.toUpperCase()} image` : 'not an image');
  }
  const window = new Window(size);
  return claimed === 'png' ? yield* pngWalk(window) : yield* jpegWalk(window);
}

/** The last block read, so that small reads close together cost one read of the file. */
class Window {
  private start = 0;
  private bytes: Buffer = Buffer.alloc(0);
  constructor(readonly size: number) {}

  /** Bytes [offset, offset + length), fewer at the end of the file. */
  *get(offset: number, length: number): Walk<Buffer> {
    const wanted = Math.min(length, Math.max(0, this.size - offset));
    if (offset < this.start || offset + wanted > this.start + this.bytes.length) yield* this.fill(offset, Math.max(length, BLOCK), wanted);
    return this.bytes.subarray(offset - this.start, offset - this.start + length);
  }

  /** The bytes from `offset` to the end of the block that holds it: at least one unless at the end of the file. */
  *from(offset: number): Walk<Buffer> {
    if (offset >= this.size) return Buffer.alloc(0);
    if (offset < this.start || offset >= this.start + this.bytes.length) yield* this.fill(offset, BLOCK, 1);
    return this.bytes.subarray(offset - this.start);
  }

  private *fill(offset: number, length: number, wanted: number): Walk<void> {
    this.bytes = yield { offset, length };
    this.start = offset;
    // A short answer before the end would make the walk stall or misjudge the file.
    if (this.bytes.length < wanted) throw new Error(`reading ${wanted} bytes at ${offset} of ${this.size} answered ${this.bytes.length}`);
  }
}

/**
 * The header as image-size decodes it (IHDR as the first chunk, or the second after an Apple CgBI
 * chunk), then every chunk's CRC up to IEND.
 */
function* pngWalk(window: Window): Walk<ImageInfo> {
  const head = yield* window.get(0, 40);
  const fried = head.toString('latin1', 12, 16) === 'CgBI';
  const at = fried ? 28 : 12;
  if (head.toString('latin1', at, at + 4) !== 'IHDR' || head.length < at + 12) throw new ImageFormatError('png', HEADER_DAMAGED);
  const width = head.readUInt32BE(at + 4);
  const height = head.readUInt32BE(at + 8);
  if (!(width > 0 && height > 0)) throw new ImageFormatError('png', HEADER_DAMAGED);

  let pos = PNG_SIGNATURE.length;
  while (pos + 12 <= window.size) {
    const chunk = yield* window.get(pos, 8);
    const length = chunk.readUInt32BE(0);
    const type = chunk.toString('latin1', 4, 8);
    const end = pos + 12 + length;
    if (end > window.size) break;
    // The CRC covers the type and the data.
    let crc = 0;
    for (let at = pos + 4; at < end - 4; ) {
      const block = (yield* window.from(at)).subarray(0, end - 4 - at);
      crc = crc32(block, crc);
      at += block.length;
    }
    if ((yield* window.get(end - 4, 4)).readUInt32BE(0) !== crc) {
      throw new ImageFormatError('png', `the checksum of its ${printable(type)} chunk is wrong (the file is damaged)`);
    }
    if (type === 'IEND') return { type: 'png', width, height };
    pos = end;
  }
  throw new ImageFormatError('png', 'the file is truncated (it ends before the IEND chunk)');
}

/** Frame headers whose dimensions count (as for image-size): baseline, extended sequential, progressive. */
const SIZED_FRAMES = new Set([0xc0, 0xc1, 0xc2]);

/**
 * Walks the segments and entropy-coded scans from SOI to EOI. The dimensions come from the first
 * SOF0/1/2 segment; a file that ends, or reaches EOI, before one is "damaged header".
 */
function* jpegWalk(window: Window): Walk<ImageInfo> {
  const size = window.size;
  let frame: { width: number; height: number } | null = null;
  const truncated = () => new ImageFormatError('jpeg', frame ? 'the file is truncated (it ends before the end-of-image marker)' : HEADER_DAMAGED);
  let pos = 2;
  while (pos < size) {
    let bytes = yield* window.get(pos, 4);
    if (bytes[0] !== 0xff) throw new ImageFormatError('jpeg', `unexpected data where a marker should be, at byte ${pos}`);
    // A marker may be preceded by any number of 0xFF fill bytes: move to the last 0xFF of the run.
    while (bytes[1] === 0xff) {
      const run = yield* window.from(pos + 1);
      let fill = 1;
      while (fill < run.length && run[fill] === 0xff) fill += 1;
      pos += fill;
      bytes = yield* window.get(pos, 4);
    }
    const marker = bytes[1];
    if (marker === undefined) throw truncated();
    if (marker === 0xd9) {
      if (!frame) throw new ImageFormatError('jpeg', HEADER_DAMAGED);
      return { type: 'jpeg', ...frame };
    }
    // Markers without a length: TEM and the restart markers.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      pos += 2;
      continue;
    }
    if (bytes.length < 4) throw truncated();
    const end = pos + 2 + bytes.readUInt16BE(2);
    if (end > size) throw truncated();
    if (SIZED_FRAMES.has(marker) && !frame) {
      // Length (2), precision (1), height (2), width (2).
      const header = yield* window.get(pos + 2, 7);
      if (header.length < 7 || end < pos + 9) throw new ImageFormatError('jpeg', HEADER_DAMAGED);
      frame = { height: header.readUInt16BE(3), width: header.readUInt16BE(5) };
      if (!(frame.width > 0 && frame.height > 0)) throw new ImageFormatError('jpeg', HEADER_DAMAGED);
    }
    pos = end;
    if (marker === 0xda) {
      // Entropy-coded data: 0xFF is followed by 0x00 (a stuffed byte) or a restart marker; any other
      // marker ends the scan. Each block is searched whole before the next is read.
      pos = yield* scanEnd(window, pos, truncated);
    }
  }
  throw truncated();
}

/** Where the entropy-coded data that starts at `pos` ends: the position of the marker after it. */
function* scanEnd(window: Window, pos: number, truncated: () => ImageFormatError): Walk<number> {
  for (;;) {
    const block = yield* window.from(pos);
    if (block.length === 0) throw truncated();
    let at = 0;
    for (;;) {
      let ff = block.indexOf(0xff, at);
      if (ff < 0) {
        at = block.length;
        break;
      }
      // In a run of 0xFF, the last one starts the marker (the others are fill bytes).
      while (block[ff + 1] === 0xff) ff += 1;
      const next = block[ff + 1];
      if (next === undefined) {
        // The block ends after the 0xFF: the byte that says what it is comes with the next read.
        at = ff;
        break;
      }
      if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) {
        at = ff + 2;
        continue;
      }
      return pos + ff;
    }
    pos += at;
    if (at < block.length) {
      const next = (yield* window.get(pos, 2))[1];
      if (next === undefined) throw truncated();
      if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) pos += 2;
      else if (next === 0xff) pos += 1;
      else return pos;
    }
  }
}

/** A chunk type as text when it is one, else its bytes in hex. */
function printable(fourcc: string): string {
  return /^[\x20-\x7e]{4}$/.test(fourcc) ? fourcc : Buffer.from(fourcc, 'latin1').toString('hex');
}

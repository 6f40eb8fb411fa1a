// MP4 and AVI videos: the container structure is walked by its sizes (never the media data), so a
// file cut short is refused; the length and pixel size are read from the headers where they are
// present (a length that cannot be read is 0, and the video is stored anyway).
import { SampleFormatError, type ParseInput, type ParsedSample } from './sampleFormat';
import { fourcc, SourceWindow } from './sourceWindow';

interface VideoInfo {
  contentType: 'video/mp4' | 'video/avi';
  totalLengthMs: number;
  width: number | null;
  height: number | null;
}

export async function parseVideo(input: ParseInput): Promise<ParsedSample> {
  const window = new SourceWindow(input.source);
  const head = await window.get(0, 12);
  let info: VideoInfo;
  if (head.length >= 12 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'AVI ') info = await readAvi(window);
  else if (head.length >= 8 && head.toString('latin1', 4, 8) === 'ftyp') info = await readMp4(window);
  else throw new SampleFormatError('the video is neither an MP4 file (starting with an ftyp box) nor an AVI file (RIFF AVI)');
  return {
    kind: 'video',
    contentType: info.contentType,
    intervalMs: 0,
    frequency: 0,
    sensors: [],
    valuesCount: 0,
    totalLengthMs: info.totalLengthMs,
    deviceName: null,
    deviceType: null,
    width: info.width,
    height: info.height,
    signature: { method: 'none-needed' },
  };
}

/**
 * What an ISO BMFF file whose major brand is `brand` is when it is not a video (HEIF and AVIF
 * images, MPEG-4 audio), else null.
 */
export function nonVideoBrand(brand: string): string | null {
  if (['mif1', 'msf1', 'heic', 'heix', 'heim', 'heis', 'hevc', 'hevx'].includes(brand)) return 'a HEIF image';
  if (['avif', 'avis', 'avio'].includes(brand)) return 'an AVIF image';
  if (['M4A ', 'M4B ', 'M4P '].includes(brand)) return 'an MPEG-4 audio file';
  return null;
}

// ---- MP4 (ISO base media file format) ----

interface Box {
  /** The four-character type as latin1 text. */
  type: string;
  /** The type as shown in messages. */
  name: string;
  body: number;
  end: number;
}

const mp4Bad = (problem: string) => new SampleFormatError(`the MP4 file ${problem}`);

/**
 * The box at `pos` inside [.., limit): `parent` null for the top level, where a box that runs past
 * the end means the file is truncated; inside a box it means the file is damaged.
 */
async function boxAt(window: SourceWindow, pos: number, limit: number, parent: Box | null): Promise<Box> {
  if (limit - pos < 8) {
    if (parent) throw mp4Bad(`is damaged: ${limit - pos} stray bytes at byte ${pos} inside its ${parent.name} box`);
    throw mp4Bad(`is truncated: it ends ${limit - pos} bytes into a box header at byte ${pos}`);
  }
  const header = await window.get(pos, 16);
  const size32 = header.readUInt32BE(0);
  const type = header.toString('latin1', 4, 8);
  const name = fourcc(header.subarray(4, 8));
  let headerLength = 8;
  let size: number;
  if (size32 === 1) {
    // A 64-bit size follows the type.
    if (limit - pos < 16) {
      if (parent) throw mp4Bad(`is damaged: the ${name} box at byte ${pos} runs past the end of its ${parent.name} box`);
      throw mp4Bad(`is truncated: it ends inside the header of its ${name} box at byte ${pos}`);
    }
    headerLength = 16;
    size = Number(header.readBigUInt64BE(8));
  } else if (size32 === 0) {
    // The box extends to the end of the file (or of its parent).
    size = limit - pos;
  } else {
    size = size32;
  }
  if (size < headerLength) throw mp4Bad(`is damaged: its ${name} box at byte ${pos} declares a size of ${size} bytes`);
  if (pos + size > limit) {
    if (parent) throw mp4Bad(`is damaged: the ${name} box at byte ${pos} runs past the end of its ${parent.name} box`);
    throw mp4Bad(`is truncated: its ${name} box at byte ${pos} claims ${size} bytes but only ${limit - pos} remain`);
  }
  return { type, name, body: pos + headerLength, end: pos + size };
}

async function* children(window: SourceWindow, parent: Box): AsyncGenerator<Box> {
  for (let pos = parent.body; pos < parent.end; ) {
    const box = await boxAt(window, pos, parent.end, parent);
    yield box;
    pos = box.end;
  }
}

/** Top-level boxes are walked by their sizes: `moov` may come before or after `mdat`. */
async function readMp4(window: SourceWindow): Promise<VideoInfo> {
  let ftyp = false;
  let movie: { totalLengthMs: number; width: number | null; height: number | null } | null = null;
  for (let pos = 0; pos < window.size; ) {
    const box = await boxAt(window, pos, window.size, null);
    if (box.type === 'ftyp' && !ftyp) {
      const brand = (await window.get(box.body, 4)).toString('latin1');
      const other = box.end - box.body >= 4 ? nonVideoBrand(brand) : null;
      if (other) throw mp4Bad(`is ${other} (brand "${brand}"), not a video`);
      ftyp = true;
    } else if (['moov', 'mdat', 'moof'].includes(box.type) && !ftyp) {
      throw mp4Bad(`has no ftyp box before its ${box.type} box`);
    }
    if (box.type === 'moov' && !movie) movie = await readMoov(window, box);
    pos = box.end;
  }
  if (!ftyp) throw mp4Bad('has no ftyp box');
  if (!movie) throw mp4Bad('has no moov box (the movie header is missing; the recording may not have been finished)');
  return { contentType: 'video/mp4', ...movie };
}

async function readMoov(window: SourceWindow, moov: Box): Promise<{ totalLengthMs: number; width: number | null; height: number | null }> {
  let totalLengthMs = 0;
  let size: { width: number; height: number } | null = null;
  for await (const box of children(window, moov)) {
    if (box.type === 'mvhd') totalLengthMs = await readMvhd(window, box);
    if (box.type === 'trak') {
      for await (const inner of children(window, box)) {
        if (inner.type === 'tkhd' && !size) size = await readTkhd(window, inner);
      }
    }
  }
  return { totalLengthMs, width: size?.width ?? null, height: size?.height ?? null };
}

/** The movie's duration in ms from `mvhd` (version 0: 32-bit times, version 1: 64-bit); 0 when unknown. */
async function readMvhd(window: SourceWindow, box: Box): Promise<number> {
  const body = await window.get(box.body, Math.min(32, box.end - box.body));
  let timescale: number;
  let duration: number;
  if (body[0] === 1 && body.length >= 32) {
    timescale = body.readUInt32BE(20);
    const long = body.readBigUInt64BE(24);
    duration = long === 0xffffffffffffffffn ? 0 : Number(long);
  } else if (body[0] === 0 && body.length >= 20) {
    timescale = body.readUInt32BE(12);
    const short = body.readUInt32BE(16);
    duration = short === 0xffffffff ? 0 : short;
  } else {
    return 0;
  }
  return timescale > 0 ? (duration / timescale) * 1000 : 0;
}

/** A track's presentation size from `tkhd` (16.16 fixed point, rounded); null for tracks without one (audio). */
async function readTkhd(window: SourceWindow, box: Box): Promise<{ width: number; height: number } | null> {
  const body = await window.get(box.body, Math.min(96, box.end - box.body));
  const at = body[0] === 1 ? 88 : body[0] === 0 ? 76 : -1;
  if (at < 0 || body.length < at + 8) return null;
  const width = Math.round(body.readUInt32BE(at) / 65536);
  const height = Math.round(body.readUInt32BE(at + 4) / 65536);
  return width > 0 && height > 0 ? { width, height } : null;
}

// ---- AVI (RIFF AVI) ----

const aviBad = (problem: string) => new SampleFormatError(`the AVI file ${problem}`);

/**
 * Top-level chunks are walked by their sizes (padded to an even size) to the end of the file; the
 * main header `avih` is read from the `hdrl` list. The RIFF size field is not trusted.
 */
async function readAvi(window: SourceWindow): Promise<VideoInfo> {
  const size = window.size;
  let main: Buffer | null = null;
  for (let pos = 12; pos < size; ) {
    if (size - pos < 8) throw aviBad(`is truncated: it ends ${size - pos} bytes into a chunk header at byte ${pos}`);
    const header = await window.get(pos, 12);
    const chunkSize = header.readUInt32LE(4);
    const end = pos + 8 + chunkSize;
    if (end > size) throw aviBad(`is truncated: its ${fourcc(header.subarray(0, 4))} chunk at byte ${pos} claims ${chunkSize} bytes but only ${size - pos - 8} follow`);
    if (header.toString('latin1', 0, 4) === 'LIST' && chunkSize >= 4 && header.toString('latin1', 8, 12) === 'hdrl' && !main) main = await readAvih(window, pos + 12, end);
    pos = end + (chunkSize % 2);
  }
  if (!main) throw aviBad('has no main header (no avih chunk in an hdrl list)');
  const microsPerFrame = main.readUInt32LE(0);
  const totalFrames = main.readUInt32LE(16);
  const width = main.readUInt32LE(32);
  const height = main.readUInt32LE(36);
  return {
    contentType: 'video/avi',
    totalLengthMs: (microsPerFrame * totalFrames) / 1000,
    width: width > 0 ? width : null,
    height: height > 0 ? height : null,
  };
}

async function readAvih(window: SourceWindow, start: number, end: number): Promise<Buffer | null> {
  for (let pos = start; pos < end; ) {
    if (end - pos < 8) throw aviBad(`is damaged: ${end - pos} stray bytes at byte ${pos} inside its hdrl list`);
    const header = await window.get(pos, 8);
    const chunkSize = header.readUInt32LE(4);
    const chunkEnd = pos + 8 + chunkSize;
    if (chunkEnd > end) throw aviBad(`is damaged: the ${fourcc(header.subarray(0, 4))} chunk at byte ${pos} runs past the end of its hdrl list`);
    if (header.toString('latin1', 0, 4) === 'avih') {
      if (chunkSize < 40) throw aviBad(`is damaged: its avih main header has ${chunkSize} bytes (at least 40 are needed)`);
      return Buffer.from(await window.get(pos + 8, 40));
    }
    pos = chunkEnd + (chunkSize % 2);
  }
  return null;
}

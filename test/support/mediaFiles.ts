// Small WAV, MP4 and AVI files built in memory for parser tests: only the structure the parsers
// read is real (headers, chunk and box sizes); media payloads are filler bytes.

/** A RIFF chunk: id, little-endian size, data and a pad byte when the size is odd. */
export function riffChunk(id: string, data: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.write(id, 0, 'latin1');
  header.writeUInt32LE(data.length, 4);
  return Buffer.concat([header, data, Buffer.alloc(data.length % 2)]);
}

/** A RIFF file of `form` ('WAVE', 'AVI ') holding `chunks`. */
export function riff(form: string, chunks: Buffer[]): Buffer {
  const body = Buffer.concat([Buffer.from(form, 'latin1'), ...chunks]);
  const header = Buffer.alloc(8);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(body.length, 4);
  return Buffer.concat([header, body]);
}

export interface WavOptions {
  sampleRate?: number;
  bitsPerSample?: number;
  encoding?: 'pcm' | 'float';
  /** Write the format as WAVE_FORMAT_EXTENSIBLE. */
  extensible?: boolean;
  /** One array per frame, one value per channel (PCM values signed; 8-bit ones are stored + 128). */
  frames: number[][];
  /** Chunks before `fmt `, between it and `data`, and after `data`. */
  before?: Buffer[];
  between?: Buffer[];
  after?: Buffer[];
}

export function wavFmt(channels: number, sampleRate: number, bitsPerSample: number, encoding: 'pcm' | 'float', extensible = false): Buffer {
  const tag = encoding === 'pcm' ? 1 : 3;
  const fmt = Buffer.alloc(extensible ? 40 : 16);
  fmt.writeUInt16LE(extensible ? 0xfffe : tag, 0);
  fmt.writeUInt16LE(channels, 2);
  fmt.writeUInt32LE(sampleRate, 4);
  fmt.writeUInt32LE((sampleRate * channels * bitsPerSample) / 8, 8);
  fmt.writeUInt16LE((channels * bitsPerSample) / 8, 12);
  fmt.writeUInt16LE(bitsPerSample, 14);
  if (extensible) {
    fmt.writeUInt16LE(22, 16);
    fmt.writeUInt16LE(bitsPerSample, 18);
    fmt.writeUInt32LE(channels === 1 ? 0x4 : 0x3, 20);
    fmt.writeUInt16LE(tag, 24);
    Buffer.from('000000001000800000aa00389b71', 'hex').copy(fmt, 26);
  }
  return riffChunk('fmt ', fmt);
}

export function wavData(frames: number[][], bitsPerSample: number, encoding: 'pcm' | 'float'): Buffer {
  const bytes = bitsPerSample / 8;
  const channels = frames[0]?.length ?? 1;
  const data = Buffer.alloc(frames.length * channels * bytes);
  frames.forEach((frame, f) =>
    frame.forEach((value, c) => {
      const at = (f * channels + c) * bytes;
      if (encoding === 'float') data.writeFloatLE(value, at);
      else if (bitsPerSample === 8) data.writeUInt8(value + 128, at);
      else data.writeIntLE(value, at, bytes);
    }),
  );
  return riffChunk('data', data);
}

export function wav(options: WavOptions): Buffer {
  const { sampleRate = 16000, bitsPerSample = 16, encoding = 'pcm', extensible = false, frames } = options;
  const channels = frames[0]?.length ?? 1;
  return riff('WAVE', [
    ...(options.before ?? []),
    wavFmt(channels, sampleRate, bitsPerSample, encoding, extensible),
    ...(options.between ?? []),
    wavData(frames, bitsPerSample, encoding),
    ...(options.after ?? []),
  ]);
}

/** An ISO BMFF box with a 32-bit size. */
export function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

/** A box with size 1 and a 64-bit largesize after its type. */
export function largeBox(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(16);
  header.writeUInt32BE(1, 0);
  header.write(type, 4, 'latin1');
  header.writeBigUInt64BE(BigInt(16 + body.length), 8);
  return Buffer.concat([header, body]);
}

export function ftyp(brand = 'isom'): Buffer {
  return box('ftyp', Buffer.from(`${brand}\0\0\x02\0isomiso2mp41`, 'latin1'));
}

export function mvhd(timescale: number, duration: number, version: 0 | 1 = 0): Buffer {
  const body = Buffer.alloc(version === 1 ? 112 : 100);
  body.writeUInt8(version, 0);
  if (version === 1) {
    body.writeUInt32BE(timescale, 20);
    body.writeBigUInt64BE(BigInt(duration), 24);
  } else {
    body.writeUInt32BE(timescale, 12);
    body.writeUInt32BE(duration, 16);
  }
  return box('mvhd', body);
}

/** A track header with a presentation size in 16.16 fixed point. */
export function tkhd(width: number, height: number, version: 0 | 1 = 0): Buffer {
  const body = Buffer.alloc(version === 1 ? 96 : 84);
  body.writeUInt8(version, 0);
  const at = version === 1 ? 88 : 76;
  body.writeUInt32BE(Math.round(width * 65536), at);
  body.writeUInt32BE(Math.round(height * 65536), at + 4);
  return box('tkhd', body);
}

export interface Mp4Options {
  timescale?: number;
  duration?: number;
  width?: number;
  height?: number;
  version?: 0 | 1;
  moovAfterMdat?: boolean;
  /** Write mdat with a 64-bit largesize. */
  largeMdat?: boolean;
  mdatBytes?: number;
}

/** ftyp, then moov (mvhd; an audio trak without a size; a video trak) and mdat, in either order. */
export function mp4(options: Mp4Options = {}): Buffer {
  const { timescale = 1000, duration = 2500, width = 320, height = 240, version = 0, mdatBytes = 100 } = options;
  const moov = box('moov', mvhd(timescale, duration, version), box('trak', tkhd(0, 0, version)), box('trak', tkhd(width, height, version), box('mdia')));
  const payload = Buffer.alloc(mdatBytes, 0x5a);
  const mdat = options.largeMdat ? largeBox('mdat', payload) : box('mdat', payload);
  return Buffer.concat(options.moovAfterMdat ? [ftyp(), mdat, moov] : [ftyp(), moov, mdat]);
}

export interface AviOptions {
  microsPerFrame?: number;
  totalFrames?: number;
  width?: number;
  height?: number;
  moviBytes?: number;
}

/** RIFF AVI: LIST hdrl (avih, LIST strl), LIST movi, idx1. */
export function avi(options: AviOptions = {}): Buffer {
  const { microsPerFrame = 40000, totalFrames = 50, width = 640, height = 480, moviBytes = 101 } = options;
  const avih = Buffer.alloc(56);
  avih.writeUInt32LE(microsPerFrame, 0);
  avih.writeUInt32LE(totalFrames, 16);
  avih.writeUInt32LE(1, 24);
  avih.writeUInt32LE(width, 32);
  avih.writeUInt32LE(height, 36);
  const list = (type: string, ...chunks: Buffer[]) => riffChunk('LIST', Buffer.concat([Buffer.from(type, 'latin1'), ...chunks]));
  return riff('AVI ', [
    list('hdrl', riffChunk('avih', avih), list('strl', riffChunk('strh', Buffer.alloc(56)), riffChunk('strf', Buffer.alloc(40)))),
    list('movi', riffChunk('00dc', Buffer.alloc(moviBytes, 0x33))),
    riffChunk('idx1', Buffer.alloc(16)),
  ]);
}

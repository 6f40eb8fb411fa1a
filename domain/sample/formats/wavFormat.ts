// WAV audio: a RIFF/WAVE file whose `fmt ` chunk describes PCM (8, 16, 24 or 32-bit integers) or
// IEEE float (32-bit) samples, directly or through WAVE_FORMAT_EXTENSIBLE, and whose `data` chunk
// holds whole frames. Only the chunk headers and the format are read; the samples are read by
// readWavValues when they are shown.
import { EnoughRows, RowList, type RowSink } from './rowSink';
import { SampleFormatError, type ParseInput, type ParsedSample, type SampleSource } from './sampleFormat';
import { fourcc, SourceWindow } from './sourceWindow';

interface WavLayout {
  encoding: 'pcm' | 'float';
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  blockAlign: number;
  dataOffset: number;
  frames: number;
}

const FORMAT_PCM = 0x0001;
const FORMAT_FLOAT = 0x0003;
const FORMAT_EXTENSIBLE = 0xfffe;
/** The sub-format GUID of WAVE_FORMAT_EXTENSIBLE after its first two bytes (the format code). */
const KSDATAFORMAT_TAIL = Buffer.from('000000001000800000aa00389b71', 'hex');

const FORMAT_NAMES: Record<number, string> = {
  0x0002: 'Microsoft ADPCM',
  0x0006: 'A-law',
  0x0007: 'µ-law',
  0x0011: 'IMA ADPCM',
  0x0031: 'GSM 6.10',
  0x0050: 'MPEG',
  0x0055: 'MP3',
};

const bad = (problem: string) => new SampleFormatError(`the WAV file ${problem}`);

export async function parseWav(input: ParseInput): Promise<ParsedSample> {
  const layout = await readWavLayout(input.source);
  const { channels, sampleRate, frames } = layout;
  const sensors =
    channels === 1 ? [{ name: 'audio', units: 'wav' }] : Array.from({ length: channels }, (_, i) => ({ name: `audio_${i}`, units: 'wav' }));
  return {
    kind: 'audio',
    contentType: 'audio/wav',
    intervalMs: 1000 / sampleRate,
    frequency: sampleRate,
    sensors,
    valuesCount: frames,
    totalLengthMs: (frames / sampleRate) * 1000,
    deviceName: null,
    deviceType: null,
    width: null,
    height: null,
    signature: { method: 'none-needed' },
  };
}

/**
 * The first `maxFrames` frames, one array per frame with one number per channel: integers for PCM
 * (8-bit samples, stored unsigned, are shifted to -128..127 so that silence is 0 at every depth),
 * the stored values for float.
 */
export async function readWavValues(source: SampleSource, maxFrames: number): Promise<number[][]> {
  const frames = new RowList(Number.POSITIVE_INFINITY);
  await readWavInto(source, maxFrames, frames);
  return frames.rows;
}

/** As readWavValues, each frame handed to `sink` as it is read, until the sink has enough (EnoughRows). */
export async function readWavInto(source: SampleSource, maxFrames: number, sink: RowSink): Promise<void> {
  const layout = await readWavLayout(source);
  const count = Math.max(0, Math.min(layout.frames, Math.floor(maxFrames)));
  const { channels, blockAlign, bitsPerSample, encoding } = layout;
  const bytesPerSample = bitsPerSample / 8;
  const read = sampleReader(encoding, bitsPerSample);
  const framesPerRead = Math.max(1, Math.floor((1024 * 1024) / blockAlign));
  try {
    for (let first = 0; first < count; first += framesPerRead) {
      const n = Math.min(framesPerRead, count - first);
      const bytes = await source.read(layout.dataOffset + first * blockAlign, n * blockAlign);
      if (bytes.length < n * blockAlign) throw new Error(`reading WAV frames at ${first} answered ${bytes.length} bytes`);
      for (let f = 0; f < n; f++) {
        const frame: number[] = new Array<number>(channels);
        for (let c = 0; c < channels; c++) frame[c] = read(bytes, f * blockAlign + c * bytesPerSample);
        sink.add(frame);
      }
    }
  } catch (error) {
    if (!(error instanceof EnoughRows)) throw error;
  }
}

function sampleReader(encoding: WavLayout['encoding'], bits: number): (bytes: Buffer, at: number) => number {
  if (encoding === 'float') return (bytes, at) => bytes.readFloatLE(at);
  switch (bits) {
    case 8:
      return (bytes, at) => bytes.readUInt8(at) - 128;
    case 16:
      return (bytes, at) => bytes.readInt16LE(at);
    case 24:
      return (bytes, at) => bytes.readIntLE(at, 3);
    default:
      return (bytes, at) => bytes.readInt32LE(at);
  }
}

/**
 * Walks the chunks after the RIFF header (each padded to an even size) until both `fmt ` and `data`
 * are found; others (LIST, fact, cue...) are skipped, and what follows the two is not read. The RIFF
 * size field is not trusted (writers often get it wrong); the chunks are checked against the file.
 */
async function readWavLayout(source: SampleSource): Promise<WavLayout> {
  const window = new SourceWindow(source);
  const size = source.size;
  const head = await window.get(0, 12);
  if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') {
    throw bad('does not start with a RIFF/WAVE header');
  }
  let format: Buffer | null = null;
  let data: { offset: number; size: number } | null = null;
  let pos = 12;
  while (!(format && data)) {
    if (pos + 8 > size) {
      throw bad(format ? 'has no data chunk' : 'has no fmt chunk');
    }
    const header = await window.get(pos, 8);
    const id = header.toString('latin1', 0, 4);
    const chunkSize = header.readUInt32LE(4);
    const body = pos + 8;
    if (body + chunkSize > size) {
      if (id === 'data') throw bad(`is truncated: its data chunk claims ${chunkSize} bytes but only ${size - body} follow`);
      throw bad(`is truncated: its ${fourcc(header.subarray(0, 4))} chunk at byte ${pos} claims ${chunkSize} bytes but only ${size - body} follow`);
    }
    if (id === 'fmt ' && !format) {
      if (chunkSize < 16) throw bad(`has a fmt chunk of ${chunkSize} bytes (at least 16 are needed)`);
      format = Buffer.from(await window.get(body, Math.min(chunkSize, 40)));
    } else if (id === 'data' && !data) {
      data = { offset: body, size: chunkSize };
    }
    pos = body + chunkSize + (chunkSize % 2);
  }

  let tag = format.readUInt16LE(0);
  const channels = format.readUInt16LE(2);
  const sampleRate = format.readUInt32LE(4);
  const blockAlign = format.readUInt16LE(12);
  const bitsPerSample = format.readUInt16LE(14);
  if (tag === FORMAT_EXTENSIBLE) {
    if (format.length < 40 || format.readUInt16LE(16) < 22) throw bad('uses WAVE_FORMAT_EXTENSIBLE but its fmt chunk is too short for the extension');
    if (!format.subarray(26, 40).equals(KSDATAFORMAT_TAIL)) throw bad('uses WAVE_FORMAT_EXTENSIBLE with a sub-format that is not PCM or IEEE float');
    tag = format.readUInt16LE(24);
  }
  let encoding: WavLayout['encoding'];
  if (tag === FORMAT_PCM) {
    if (![8, 16, 24, 32].includes(bitsPerSample)) throw bad(`holds ${bitsPerSample}-bit PCM, which is not supported (8, 16, 24 or 32 bits)`);
    encoding = 'pcm';
  } else if (tag === FORMAT_FLOAT) {
    if (bitsPerSample !== 32) throw bad(`holds ${bitsPerSample}-bit float samples, which are not supported (32 bits)`);
    encoding = 'float';
  } else {
    const name = FORMAT_NAMES[tag];
    throw bad(`uses an unsupported encoding (format tag 0x${tag.toString(16).padStart(4, '0')}${name ? `, ${name}` : ''}); PCM or 32-bit float is supported`);
  }
  if (channels === 0) throw bad('declares zero channels');
  if (sampleRate === 0) throw bad('declares a sample rate of zero');
  if (blockAlign !== (channels * bitsPerSample) / 8) {
    throw bad(`declares a block align of ${blockAlign} bytes, but ${channels} channel(s) of ${bitsPerSample} bits take ${(channels * bitsPerSample) / 8}`);
  }
  if (data.size % blockAlign !== 0) throw bad(`has a data chunk of ${data.size} bytes, not a whole number of ${blockAlign}-byte frames`);
  const frames = data.size / blockAlign;
  if (frames === 0) throw bad('holds no audio (its data chunk is empty)');
  return { encoding, channels, sampleRate, bitsPerSample, blockAlign, dataOffset: data.offset, frames };
}

import { describe, expect, it } from 'vitest';
import { SampleFormatError, type SampleSource } from '../../../../domain/sample/formats/sampleFormat';
import { parseWav, readWavValues } from '../../../../domain/sample/formats/wavFormat';
import { riff, riffChunk, wav, wavData, wavFmt } from '../../../support/mediaFiles';
import { memorySource, parseInput } from '../../../support/memorySource';

const parse = (bytes: Buffer) => parseWav(parseInput(bytes, { fileName: 'sound.wav', declaredType: 'audio/wav' }));
const refused = async (bytes: Buffer, message: RegExp) => {
  const error = await parse(bytes).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(SampleFormatError);
  expect((error as Error).message).toMatch(message);
};

/** A source that fails any read of the whole file, and records the reads. */
function partialOnly(bytes: Buffer): SampleSource & { reads: { offset: number; length: number }[] } {
  const source = memorySource(bytes);
  const reads: { offset: number; length: number }[] = [];
  return {
    size: source.size,
    reads,
    read: (offset, length) => {
      reads.push({ offset, length });
      return source.read(offset, length);
    },
    readAll: () => Promise.reject(new Error('readAll must not be used for WAV files')),
  };
}

describe('parseWav', () => {
  it('reads a 16-bit mono file: rate, one "audio" sensor, frames and length', async () => {
    const frames = Array.from({ length: 1600 }, (_, i) => [i % 100]);
    const sample = await parse(wav({ sampleRate: 16000, frames }));
    expect(sample).toEqual({
      kind: 'audio',
      contentType: 'audio/wav',
      intervalMs: 1000 / 16000,
      frequency: 16000,
      sensors: [{ name: 'audio', units: 'wav' }],
      valuesCount: 1600,
      totalLengthMs: 100,
      deviceName: null,
      deviceType: null,
      width: null,
      height: null,
      signature: { method: 'none-needed' },
    });
  });

  it('names the channels of a stereo file audio_0 and audio_1', async () => {
    const sample = await parse(wav({ sampleRate: 8000, bitsPerSample: 8, frames: Array.from({ length: 4000 }, () => [1, -1]) }));
    expect(sample.sensors).toEqual([
      { name: 'audio_0', units: 'wav' },
      { name: 'audio_1', units: 'wav' },
    ]);
    expect(sample).toMatchObject({ frequency: 8000, valuesCount: 4000, totalLengthMs: 500 });
  });

  it('reads 24 and 32-bit PCM, 32-bit float, and WAVE_FORMAT_EXTENSIBLE', async () => {
    const frames = [[1], [2], [3], [4]];
    expect((await parse(wav({ sampleRate: 4, bitsPerSample: 24, frames }))).valuesCount).toBe(4);
    expect((await parse(wav({ sampleRate: 4, bitsPerSample: 32, frames }))).totalLengthMs).toBe(1000);
    expect((await parse(wav({ sampleRate: 4, bitsPerSample: 32, encoding: 'float', frames: [[0.5], [-0.5], [0], [1]] }))).valuesCount).toBe(4);
    const extensible = await parse(wav({ sampleRate: 48000, bitsPerSample: 16, extensible: true, frames: [[1, 2, 3]] }));
    expect(extensible.sensors.map((s) => s.name)).toEqual(['audio_0', 'audio_1', 'audio_2']);
    expect((await parse(wav({ sampleRate: 48000, bitsPerSample: 32, encoding: 'float', extensible: true, frames: [[0.25]] }))).valuesCount).toBe(1);
  });

  it('skips other chunks (LIST, odd-sized ones with their pad byte) before, between and after', async () => {
    const odd = riffChunk('junk', Buffer.alloc(3, 1));
    const list = riffChunk('LIST', Buffer.from('INFOISFT\x05\0\0\0test\0\0', 'latin1'));
    const bytes = wav({ sampleRate: 1000, frames: [[1], [2]], before: [odd, list], between: [odd], after: [list] });
    expect(await parse(bytes)).toMatchObject({ valuesCount: 2, totalLengthMs: 2 });
  });

  it('accepts fmt after data, and an odd-sized data chunk at the very end without its pad byte', async () => {
    const swapped = riff('WAVE', [wavData([[1], [2]], 16, 'pcm'), wavFmt(1, 100, 16, 'pcm')]);
    expect((await parse(swapped)).valuesCount).toBe(2);
    const odd = riff('WAVE', [wavFmt(3, 100, 8, 'pcm'), wavData([[1, 2, 3]], 8, 'pcm')]);
    expect((await parse(odd.subarray(0, odd.length - 1))).sensors).toHaveLength(3);
  });

  it('reads only the headers, never the whole file', async () => {
    const source = partialOnly(wav({ frames: Array.from({ length: 100_000 }, () => [0, 0]) }));
    const sample = await parseWav({ source, fileName: 'a.wav', declaredType: null, hmacKeys: [] });
    expect(sample.valuesCount).toBe(100_000);
    expect(source.reads.length).toBeLessThanOrEqual(2);
  });

  it('refuses a data chunk that claims more bytes than the file has', async () => {
    const bytes = wav({ frames: Array.from({ length: 100 }, () => [1]) });
    await refused(bytes.subarray(0, bytes.length - 10), /truncated: its data chunk claims 200 bytes but only 190 follow/);
    const huge = Buffer.from(bytes);
    huge.writeUInt32LE(0xffffffff, huge.indexOf('data') + 4);
    await refused(huge, /truncated/);
  });

  it('refuses another chunk running past the end, a missing fmt or data chunk, and what is not RIFF/WAVE', async () => {
    await refused(riff('WAVE', [wavFmt(1, 100, 16, 'pcm'), Buffer.from('LIST\xff\0\0\0abc', 'latin1')]), /truncated: its "LIST" chunk at byte 36 claims 255 bytes/);
    await refused(riff('WAVE', [wavFmt(1, 100, 16, 'pcm')]), /has no data chunk/);
    await refused(riff('WAVE', [wavData([[1]], 16, 'pcm')]), /has no fmt chunk/);
    await refused(riff('AVI ', []), /RIFF\/WAVE header/);
    await refused(Buffer.from('RIFF'), /RIFF\/WAVE header/);
  });

  it('refuses zero channels or sample rate, unsupported encodings and depths, and a wrong block align', async () => {
    const withFmt = (edit: (fmt: Buffer) => void, extensible = false) => {
      const bytes = wav({ frames: [[1], [2]], extensible });
      edit(bytes.subarray(bytes.indexOf('fmt ') + 8));
      return bytes;
    };
    await refused(withFmt((f) => f.writeUInt16LE(0, 2)), /declares zero channels/);
    await refused(withFmt((f) => f.writeUInt32LE(0, 4)), /sample rate of zero/);
    await refused(withFmt((f) => f.writeUInt16LE(0x55, 0)), /unsupported encoding \(format tag 0x0055, MP3\)/);
    await refused(withFmt((f) => f.writeUInt16LE(12, 14)), /12-bit PCM, which is not supported/);
    await refused(withFmt((f) => f.writeUInt16LE(4, 12)), /block align of 4 bytes, but 1 channel\(s\) of 16 bits take 2/);
    await refused(withFmt((f) => f.writeUInt16LE(2, 24), true), /unsupported encoding \(format tag 0x0002/);
    await refused(withFmt((f) => f.writeUInt8(1, 30), true), /sub-format that is not PCM or IEEE float/);
    await refused(wav({ encoding: 'float', bitsPerSample: 32, frames: [[1]] }).fill(16, 34, 35), /16-bit float samples/);
    await refused(riff('WAVE', [riffChunk('fmt ', Buffer.alloc(14)), wavData([[1]], 16, 'pcm')]), /fmt chunk of 14 bytes/);
  });

  it('refuses a data size that is not a whole number of frames, and an empty data chunk', async () => {
    await refused(riff('WAVE', [wavFmt(2, 100, 16, 'pcm'), riffChunk('data', Buffer.alloc(6))]), /not a whole number of 4-byte frames/);
    await refused(riff('WAVE', [wavFmt(1, 100, 16, 'pcm'), riffChunk('data', Buffer.alloc(0))]), /holds no audio/);
  });
});

describe('readWavValues', () => {
  it('answers the frames as integers for PCM (8-bit centred on 0) and as stored for float', async () => {
    expect(await readWavValues(memorySource(wav({ bitsPerSample: 8, frames: [[-128, 127], [0, 5]] })), 10)).toEqual([
      [-128, 127],
      [0, 5],
    ]);
    expect(await readWavValues(memorySource(wav({ bitsPerSample: 16, frames: [[-32768], [32767], [-1]] })), 10)).toEqual([[-32768], [32767], [-1]]);
    expect(await readWavValues(memorySource(wav({ bitsPerSample: 24, frames: [[-8388608], [8388607]] })), 10)).toEqual([[-8388608], [8388607]]);
    expect(await readWavValues(memorySource(wav({ bitsPerSample: 32, frames: [[-2147483648], [7]] })), 10)).toEqual([[-2147483648], [7]]);
    expect(await readWavValues(memorySource(wav({ bitsPerSample: 32, encoding: 'float', frames: [[0.5, -0.25]] })), 10)).toEqual([[0.5, -0.25]]);
  });

  it('stops at maxFrames, reading only those frames', async () => {
    const frames = Array.from({ length: 1_000_000 }, (_, i) => [i % 1000, 1 - (i % 1000)]);
    const source = partialOnly(wav({ frames }));
    const values = await readWavValues(source, 3);
    expect(values).toEqual([
      [0, 1],
      [1, 0],
      [2, -1],
    ]);
    expect(Math.max(...source.reads.slice(-1).map((r) => r.length))).toBe(12);
    expect(await readWavValues(memorySource(wav({ frames: [[1]] })), 0)).toEqual([]);
  });
});

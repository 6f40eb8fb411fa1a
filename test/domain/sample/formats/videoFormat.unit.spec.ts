import { describe, expect, it } from 'vitest';
import { SampleFormatError, type SampleSource } from '../../../../domain/sample/formats/sampleFormat';
import { parseVideo } from '../../../../domain/sample/formats/videoFormat';
import { avi, box, ftyp, largeBox, mp4, mvhd, riff, riffChunk, tkhd } from '../../../support/mediaFiles';
import { memorySource, parseInput } from '../../../support/memorySource';

const parse = (bytes: Buffer) => parseVideo(parseInput(bytes, { fileName: 'clip.mp4', declaredType: null }));
const refused = async (bytes: Buffer, message: RegExp) => {
  const error = await parse(bytes).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(SampleFormatError);
  expect((error as Error).message).toMatch(message);
};

function recording(bytes: Buffer): SampleSource & { bytesRead: () => number } {
  const source = memorySource(bytes);
  let total = 0;
  return {
    size: source.size,
    read: async (offset, length) => {
      const answer = await source.read(offset, length);
      total += answer.length;
      return answer;
    },
    readAll: () => Promise.reject(new Error('readAll must not be used for videos')),
    bytesRead: () => total,
  };
}

describe('parseVideo: MP4', () => {
  it('reads the duration from mvhd and the size from the video track header', async () => {
    expect(await parse(mp4({ timescale: 600, duration: 1500, width: 1280, height: 720 }))).toEqual({
      kind: 'video',
      contentType: 'video/mp4',
      intervalMs: 0,
      frequency: 0,
      sensors: [],
      valuesCount: 0,
      totalLengthMs: 2500,
      deviceName: null,
      deviceType: null,
      width: 1280,
      height: 720,
      signature: { method: 'none-needed' },
    });
  });

  it('reads version 1 headers (64-bit times)', async () => {
    expect(await parse(mp4({ version: 1, timescale: 90000, duration: 90000 * 3600 * 2, width: 640.5, height: 360 }))).toMatchObject({
      totalLengthMs: 7_200_000,
      width: 641,
      height: 360,
    });
  });

  it('finds moov after mdat by skipping boxes by their sizes, including a 64-bit largesize', async () => {
    const bytes = mp4({ moovAfterMdat: true, largeMdat: true, mdatBytes: 5 * 1024 * 1024, duration: 4000 });
    const source = recording(bytes);
    const sample = await parseVideo({ source, fileName: 'a.mp4', declaredType: 'video/mp4', hmacKeys: [] });
    expect(sample).toMatchObject({ totalLengthMs: 4000, width: 320, height: 240 });
    expect(source.bytesRead()).toBeLessThan(300 * 1024);
  });

  it('accepts a last box of size 0 (it extends to the end of the file)', async () => {
    const open = Buffer.concat([mp4(), Buffer.from([0, 0, 0, 0]), Buffer.from('mdat'), Buffer.alloc(50)]);
    expect((await parse(open)).totalLengthMs).toBe(2500);
  });

  it('stores a length of 0 when it cannot be read: no mvhd duration, unknown duration, zero timescale', async () => {
    const noMvhd = Buffer.concat([ftyp(), box('moov', box('trak', tkhd(10, 20))), box('mdat')]);
    expect(await parse(noMvhd)).toMatchObject({ totalLengthMs: 0, width: 10, height: 20 });
    const unknown = Buffer.concat([ftyp(), box('moov', mvhd(1000, 0xffffffff)), box('mdat')]);
    expect(await parse(unknown)).toMatchObject({ totalLengthMs: 0, width: null, height: null });
    expect((await parse(mp4({ timescale: 0 }))).totalLengthMs).toBe(0);
  });

  it('refuses a box that runs past the end of the file as truncated', async () => {
    const bytes = mp4({ mdatBytes: 1000 });
    await refused(bytes.subarray(0, bytes.length - 1), /^the MP4 file is truncated: its "mdat" box at byte \d+ claims 1008 bytes but only 1007 remain$/);
    await refused(bytes.subarray(0, 40), /is truncated: its "moov" box at byte 28/);
    await refused(bytes.subarray(0, 30), /is truncated: it ends 2 bytes into a box header at byte 28/);
    const large = mp4({ largeMdat: true, moovAfterMdat: true });
    await refused(large.subarray(0, 36), /is truncated: it ends inside the header of its "mdat" box/);
    await refused(Buffer.concat([bytes, Buffer.from([0, 0, 1])]), /is truncated: it ends 3 bytes into a box header/);
  });

  it('refuses a damaged structure: a child past its parent, an impossible size', async () => {
    const overrun = Buffer.concat([ftyp(), box('moov', Buffer.from([0, 0, 1, 0]), Buffer.from('trak')), box('mdat')]);
    await refused(overrun, /is damaged: the "trak" box at byte \d+ runs past the end of its "moov" box/);
    await refused(Buffer.concat([ftyp(), Buffer.from([0, 0, 0, 4]), Buffer.from('free')]), /declares a size of 4 bytes/);
  });

  it('refuses a file without ftyp before its media, or without moov, or that is an image or audio', async () => {
    await refused(Buffer.concat([ftyp(), box('mdat', Buffer.alloc(10))]), /has no moov box/);
    await refused(Buffer.concat([ftyp('heic'), box('meta')]), /is a HEIF image \(brand "heic"\), not a video/);
    await refused(Buffer.concat([ftyp('M4A '), box('moov')]), /MPEG-4 audio file/);
    await refused(Buffer.from('not a video at all'), /neither an MP4 file .* nor an AVI file/);
  });
});

describe('parseVideo: AVI', () => {
  it('reads the length (µs per frame × frames) and the size from avih', async () => {
    expect(await parse(avi({ microsPerFrame: 33367, totalFrames: 300, width: 1920, height: 1080 }))).toMatchObject({
      kind: 'video',
      contentType: 'video/avi',
      totalLengthMs: 10010.1,
      width: 1920,
      height: 1080,
      valuesCount: 0,
    });
  });

  it('reads only headers of a large file', async () => {
    const source = recording(avi({ moviBytes: 4 * 1024 * 1024 }));
    expect(await parseVideo({ source, fileName: 'a.avi', declaredType: null, hmacKeys: [] })).toMatchObject({ totalLengthMs: 2000 });
    expect(source.bytesRead()).toBeLessThan(200 * 1024);
  });

  it('stores a length of 0 and no size when avih has none', async () => {
    expect(await parse(avi({ totalFrames: 0, width: 0, height: 0 }))).toMatchObject({ totalLengthMs: 0, width: null, height: null });
  });

  it('refuses a chunk that runs past the end as truncated', async () => {
    const bytes = avi({ moviBytes: 1000 });
    await refused(bytes.subarray(0, bytes.length - 30), /^the AVI file is truncated: its "LIST" chunk at byte \d+ claims 1012 bytes but only 1006 follow$/);
    await refused(bytes.subarray(0, bytes.length - 1), /^the AVI file is truncated: its "idx1" chunk/);
    await refused(bytes.subarray(0, 200), /the AVI file is truncated: its "LIST" chunk at byte 12/);
    await refused(Buffer.concat([bytes, Buffer.from('abc')]), /truncated: it ends 3 bytes into a chunk header/);
  });

  it('refuses a file without avih, or with a damaged hdrl list', async () => {
    await refused(riff('AVI ', [riffChunk('LIST', Buffer.from('movi'))]), /has no main header/);
    const shortAvih = riff('AVI ', [riffChunk('LIST', Buffer.concat([Buffer.from('hdrl'), riffChunk('avih', Buffer.alloc(20))]))]);
    await refused(shortAvih, /avih main header has 20 bytes/);
    const overrun = riff('AVI ', [riffChunk('LIST', Buffer.concat([Buffer.from('hdrl'), Buffer.from('avih\x40\0\0\0', 'latin1'), Buffer.alloc(8)]))]);
    await refused(overrun, /the "avih" chunk at byte 24 runs past the end of its hdrl list/);
  });

  it('is not confused by a largesize box inside moov', async () => {
    const bytes = Buffer.concat([ftyp(), largeBox('moov', mvhd(10, 25), largeBox('trak', tkhd(2, 3))), box('mdat')]);
    expect(await parse(bytes)).toMatchObject({ totalLengthMs: 2500, width: 2, height: 3 });
  });
});

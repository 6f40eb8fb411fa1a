import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ImageFormatError, inspectImage, inspectImageFrom } from '../../../../domain/media/imageCheck';
import { parseImage } from '../../../../domain/sample/formats/imageFormat';
import { SampleFormatError, type SampleSource } from '../../../../domain/sample/formats/sampleFormat';
import { GIF, JPEG, jpegSized, png, pngChunk, pngHeader, PNG_SIGNATURE } from '../../../support/images';
import { memorySource, parseInput } from '../../../support/memorySource';

const parse = (bytes: Buffer) => parseImage(parseInput(bytes, { fileName: 'picture.png', declaredType: null }));
const refused = async (bytes: Buffer, message: RegExp) => {
  const error = await parse(bytes).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(SampleFormatError);
  expect((error as Error).message).toMatch(message);
};

/** A PNG whose IDAT holds `dataBytes` bytes (not decoded by the check), for block-wise CRCs. */
function bigPng(dataBytes: number, width = 1000, height = 800): Buffer {
  return Buffer.concat([PNG_SIGNATURE, pngHeader(width, height), pngChunk('IDAT', randomBytes(dataBytes)), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A JPEG whose scan holds `n` random bytes, stuffed as an encoder would (0xFF followed by 0x00). */
function bigJpeg(n: number): Buffer {
  const sos = JPEG.indexOf(Buffer.from([0xff, 0xda]));
  const scanStart = sos + 2 + JPEG.readUInt16BE(sos + 2);
  const scan = Buffer.from(randomBytes(n).toString('hex').replace(/ff/g, 'ff00'), 'hex');
  return Buffer.concat([JPEG.subarray(0, scanStart), scan, Buffer.from([0xff, 0xd9])]);
}

function recording(bytes: Buffer): SampleSource & { largest: () => number; count: () => number } {
  const source = memorySource(bytes);
  const lengths: number[] = [];
  return {
    size: source.size,
    read: (offset, length) => {
      lengths.push(Math.min(length, bytes.length - offset));
      return source.read(offset, length);
    },
    readAll: () => Promise.reject(new Error('readAll must not be used for images')),
    largest: () => Math.max(...lengths),
    count: () => lengths.length,
  };
}

describe('parseImage', () => {
  it('reads the dimensions of a PNG', async () => {
    expect(await parse(png([1, 2, 3, 255], 7, 5))).toEqual({
      kind: 'image',
      contentType: 'image/png',
      intervalMs: 0,
      frequency: 0,
      sensors: [],
      valuesCount: 0,
      totalLengthMs: 0,
      deviceName: null,
      deviceType: null,
      width: 7,
      height: 5,
      signature: { method: 'none-needed' },
    });
  });

  it('reads the dimensions of a JPEG from its frame header', async () => {
    expect(await parse(JPEG)).toMatchObject({ kind: 'image', contentType: 'image/jpeg', width: 2, height: 2 });
    expect(await parse(jpegSized(640, 480))).toMatchObject({ width: 640, height: 480 });
  });

  it('checks a large image a block at a time, without reading it whole', async () => {
    const bytes = bigPng(3 * 1024 * 1024 + 17);
    const source = recording(bytes);
    expect(await parseImage({ source, fileName: 'x.png', declaredType: null, hmacKeys: [] })).toMatchObject({ width: 1000, height: 800 });
    expect(source.largest()).toBeLessThanOrEqual(256 * 1024);
    const jpeg = recording(bigJpeg(2 * 1024 * 1024));
    expect(await parseImage({ source: jpeg, fileName: 'x.jpg', declaredType: null, hmacKeys: [] })).toMatchObject({ width: 2, height: 2 });
    expect(jpeg.largest()).toBeLessThanOrEqual(256 * 1024);
  });

  it('finds a CRC error in any block of a large chunk, and a truncation anywhere', async () => {
    const bytes = bigPng(1024 * 1024);
    const damaged = Buffer.from(bytes);
    damaged[700_000]! ^= 0x01;
    await refused(damaged, /^the image is not a valid PNG: the checksum of its IDAT chunk is wrong \(the file is damaged\)$/);
    await refused(bytes.subarray(0, bytes.length - 1), /not a valid PNG: the file is truncated \(it ends before the IEND chunk\)/);
    await refused(bytes.subarray(0, 500_000), /not a valid PNG: the file is truncated/);
    const jpeg = bigJpeg(600_000);
    await refused(jpeg.subarray(0, jpeg.length - 2), /not a valid JPEG: the file is truncated \(it ends before the end-of-image marker\)/);
    await refused(jpeg.subarray(0, 300_000), /not a valid JPEG: the file is truncated/);
  });

  it('refuses a damaged header: no IHDR first, zero dimensions, no frame header before the end', async () => {
    await refused(png([0, 0, 0, 255]).subarray(0, 20), /not a valid PNG: its header is damaged or the file is truncated/);
    await refused(Buffer.concat([PNG_SIGNATURE, pngChunk('tEXt', Buffer.from('a')), pngHeader(1, 1), pngChunk('IEND', Buffer.alloc(0))]), /its header is damaged/);
    await refused(Buffer.concat([PNG_SIGNATURE, pngHeader(0, 5), pngChunk('IEND', Buffer.alloc(0))]), /its header is damaged/);
    await refused(jpegSized(0, 10), /not a valid JPEG: its header is damaged/);
    const sof = JPEG.indexOf(Buffer.from([0xff, 0xc0]));
    await refused(JPEG.subarray(0, sof + 4), /not a valid JPEG: its header is damaged or the file is truncated/);
    await refused(Buffer.from([0xff, 0xd8, 0xff, 0xd9]), /not a valid JPEG: its header is damaged/);
  });

  it('refuses data where a JPEG marker should be', async () => {
    const bytes = Buffer.from(JPEG);
    // The first segment (a quantisation table) runs from byte 2 to 2 + 2 + its length.
    const next = 4 + bytes.readUInt16BE(4);
    bytes[next] = 0x00;
    await refused(bytes, new RegExp(`unexpected data where a marker should be, at byte ${next}$`));
  });

  it('refuses what is not a PNG or JPEG, naming it', async () => {
    await refused(GIF, /^the image is not a PNG or JPEG image \(this file is a GIF image\)$/);
    await refused(Buffer.from('hello'), /this file is not an image/);
  });
});

describe('inspectImage (the check shared with profile photos)', () => {
  it('gives the same answer over a buffer and over a reader', async () => {
    for (const bytes of [png([9, 9, 9, 9], 3, 4), JPEG, bigPng(600_000), bigJpeg(400_000)]) {
      expect(inspectImage(bytes)).toEqual(await inspectImageFrom(memorySource(bytes)));
    }
    for (const bytes of [GIF, png([1, 1, 1, 1]).subarray(0, 40), JPEG.subarray(0, 100)]) {
      const sync = (() => {
        try {
          return inspectImage(bytes);
        } catch (error) {
          return error;
        }
      })();
      const async = await inspectImageFrom(memorySource(bytes)).catch((error: unknown) => error);
      expect(sync).toBeInstanceOf(ImageFormatError);
      expect(async).toEqual(sync);
    }
  });

  it('follows a scan whose 0xFF is the last byte of a block read, whatever comes after it', async () => {
    const sos = JPEG.indexOf(Buffer.from([0xff, 0xda]));
    const scanStart = sos + 2 + JPEG.readUInt16BE(sos + 2);
    // The walk reads 256 KB blocks, the first one from byte 2.
    const blockEnd = 2 + 256 * 1024;
    const withScan = (atBoundary: number[], ending: number[]) => {
      const filler = Buffer.alloc(blockEnd - 1 - scanStart, 0x11);
      return Buffer.concat([JPEG.subarray(0, scanStart), filler, Buffer.from(atBoundary), Buffer.alloc(1000, 0x22), Buffer.from(ending)]);
    };
    for (const bytes of [withScan([0xff, 0x00], [0xff, 0xd9]), withScan([0xff, 0xd3], [0xff, 0xd9]), withScan([0xff, 0xff, 0x00], [0xff, 0xd9])]) {
      expect(await inspectImageFrom(memorySource(bytes))).toEqual({ type: 'jpeg', width: 2, height: 2 });
    }
    const ended = Buffer.concat([JPEG.subarray(0, scanStart), Buffer.alloc(blockEnd - 1 - scanStart, 0x11), Buffer.from([0xff, 0xd9])]);
    expect(await inspectImageFrom(memorySource(ended))).toEqual({ type: 'jpeg', width: 2, height: 2 });
    await expect(inspectImageFrom(memorySource(ended.subarray(0, ended.length - 1)))).rejects.toThrow(/the file is truncated/);
  });

  it('ignores what follows IEND or EOI, and accepts fill bytes before a marker', async () => {
    expect(inspectImage(Buffer.concat([png([1, 2, 3, 4]), Buffer.from('trailing')]))).toEqual({ type: 'png', width: 2, height: 2 });
    expect(inspectImage(Buffer.concat([JPEG, Buffer.from('trailing')]))).toEqual({ type: 'jpeg', width: 2, height: 2 });
    const filled = Buffer.concat([JPEG.subarray(0, 2), Buffer.from([0xff, 0xff, 0xff]), JPEG.subarray(2)]);
    expect(inspectImage(filled)).toEqual({ type: 'jpeg', width: 2, height: 2 });
  });

  it('tells the claimed type and the problem apart for callers that word their own messages', () => {
    const error = (() => {
      try {
        inspectImage(png([1, 2, 3, 4]).subarray(0, 60));
      } catch (caught) {
        return caught as ImageFormatError;
      }
    })();
    expect(error).toMatchObject({ claimed: 'png', detail: 'the file is truncated (it ends before the IEND chunk)' });
  });
});

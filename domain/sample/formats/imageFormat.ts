// PNG and JPEG images: the same whole-file check as profile photos (domain/media/imageCheck), read a
// block at a time through the source, so a 100 MB image is never held whole.
import { ImageFormatError, inspectImageFrom } from '../../media/imageCheck';
import { SampleFormatError, type ParseInput, type ParsedSample } from './sampleFormat';

const CONTENT_TYPES = { png: 'image/png', jpeg: 'image/jpeg' } as const;

export async function parseImage(input: ParseInput): Promise<ParsedSample> {
  let image;
  try {
    image = await inspectImageFrom(input.source);
  } catch (error) {
    if (error instanceof ImageFormatError) throw new SampleFormatError(`the image is ${error.message}`);
    throw error;
  }
  return {
    kind: 'image',
    contentType: CONTENT_TYPES[image.type],
    intervalMs: 0,
    frequency: 0,
    sensors: [],
    valuesCount: 0,
    totalLengthMs: 0,
    deviceName: null,
    deviceType: null,
    width: image.width,
    height: image.height,
    signature: { method: 'none-needed' },
  };
}

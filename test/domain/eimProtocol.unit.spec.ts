import { describe, expect, it } from 'vitest';
import { eimModelParameters, type EimSpecView } from '../../domain/deployment/eimProtocol';

const imageSpec = (channels: string): EimSpecView => ({
  inputBlock: { type: 'image', imageWidth: 48, imageHeight: 32, resizeMode: 'fit-short' },
  dspBlocks: [{ dspBlock: { type: 'image' }, config: { channels } }],
  learnBlocks: [{ type: 'keras', id: 3, minimumConfidenceRating: 0.5 }],
});

describe("the .eim hello's model parameters", () => {
  it('describe an image impulse as a camera with its size, resize mode and the image block\'s channels', () => {
    const params = eimModelParameters(imageSpec('RGB'), { rawValueCount: 48 * 32, labels: ['cat', 'dog'] });
    expect(params).toMatchObject({ sensor: 3, image_input_width: 48, image_input_height: 32, image_input_frames: 1, image_channel_count: 3, image_resize_mode: 'fit-shortest', input_features_count: 1536, frequency: 0, interval_ms: 0, has_anomaly: 0 });
    expect(eimModelParameters(imageSpec('Grayscale'), { rawValueCount: 48 * 32, labels: ['cat', 'dog'] })).toMatchObject({ image_channel_count: 1 });
  });

  it('describe a one-axis series at audio rates as a microphone, and other series as an accelerometer', () => {
    const series = (axes: string[], frequencyHz: number): EimSpecView => ({ inputBlock: { type: 'time-series', axes, windowSizeMs: 1000, frequencyHz }, learnBlocks: [] });
    expect(eimModelParameters(series(['audio'], 16000), { rawValueCount: 16000, labels: [] })).toMatchObject({ sensor: 1, axis_count: 1, frequency: 16000, interval_ms: 0.0625 });
    expect(eimModelParameters(series(['x', 'y', 'z'], 62.5), { rawValueCount: 186, labels: [] })).toMatchObject({ sensor: 2, axis_count: 3, interval_ms: 16 });
  });
});

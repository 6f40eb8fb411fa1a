// The generate-features job's check of the impulse's input block, shared by its route and the job.
import { describe, expect, it } from 'vitest';
import { checkFeatureInput } from '../../commands/dsp/checkFeatureInput';
import type { ImpulseDsp } from '../../domain/dsp/impulseDsp';
import { DspConfigurationError } from '../../domain/dsp/processingBlock';
import { WindowingError } from '../../domain/dsp/windows';
import type { InputBlock } from '../../domain/impulse/impulseEvents';

const timeSeries: InputBlock = { id: 1, type: 'time-series', name: 'Time series', title: 'Time series', windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 100, createdAt: '2026-11-25T10:00:00.000Z' };
const image: InputBlock = { id: 1, type: 'image', name: 'Image', title: 'Image', imageWidth: 96, imageHeight: 64, createdAt: '2026-11-25T10:00:00.000Z' };
// Only the input block is read; the rest of a resolved DSP does not matter here.
const dspOn = (inputBlock: InputBlock) => ({ inputBlock }) as ImpulseDsp;

describe('the input block of a generate-features job', () => {
  it('of time series is accepted, its windowing left to the job (it needs the samples\' frequency)', () => {
    expect(checkFeatureInput(dspOn(timeSeries))).toBeNull();
  });

  it('of images gives the image windowing', () => {
    expect(checkFeatureInput(dspOn(image))).toEqual({ width: 96, height: 64, resizeMode: 'squash', resizeMethod: 'lanczos3', cropAnchor: 'middle-center' });
  });

  it('of images without a size is refused with a WindowingError', () => {
    expect(() => checkFeatureInput(dspOn({ ...image, imageWidth: undefined }))).toThrow(WindowingError);
  });

  it('of another type is refused, naming the types the service handles', () => {
    const other: InputBlock = { ...timeSeries, type: 'features' };
    expect(() => checkFeatureInput(dspOn(other))).toThrow(DspConfigurationError);
    expect(() => checkFeatureInput(dspOn(other))).toThrow('input block 1 is of type "features": this service generates features for time-series and image impulses');
  });
});

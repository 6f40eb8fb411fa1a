import type { ImpulseDsp } from '../../domain/dsp/impulseDsp';
import { DspConfigurationError } from '../../domain/dsp/processingBlock';
import { imageWindowing, type ImageWindowing } from '../../domain/dsp/windows';

/**
 * The input blocks the generate-features job handles, checked alike by its route (before a job is
 * requested, a 400) and by the job itself (the impulse may have changed since): time-series and
 * image ones, an image block with its size. Returns the image windowing, or null for time series,
 * whose windowing needs the samples' frequency and is made by the job. Throws DspConfigurationError
 * for another input type, WindowingError for an image block without its size.
 */
export function checkFeatureInput(dsp: ImpulseDsp): ImageWindowing | null {
  const input = dsp.inputBlock;
  if (input.type !== 'image' && input.type !== 'time-series') {
    throw new DspConfigurationError(`input block ${input.id} is of type "${input.type}": this service generates features for time-series and image impulses`);
  }
  return input.type === 'image' ? imageWindowing(input) : null;
}

// The block's optional denoising filter (dsp-reference §5.2, §5.3 step 3): scipy's Butterworth
// sections cast to float32, refused with the reference's reasons.
import { DspConfigurationError } from '../processingBlock';
import { filterIsStable } from './filterStability';
import { butterSos, type SosSection } from './iirDesign';
import type { SpectralParameters } from './spectralParameters';

/** The float32 sections to filter with, or null when the block does not filter. */
export function butterworthStage(p: SpectralParameters, fs: number): SosSection[] | null {
  if (p.filterType === 'none' || p.filterOrder === 0) return null;
  if (p.filterOrder % 2 !== 0) throw new DspConfigurationError(`"filter-order": filter order needs to be even (2, 4, 6, 8), got ${p.filterOrder}`);
  if (p.filterOrder < 1 || p.filterOrder > 9) throw new DspConfigurationError(`"filter-order": filter order needs to be between 2 and 8, got ${p.filterOrder}`);
  const wn = (p.filterCutoff * 2) / fs;
  if (wn >= 1) throw new DspConfigurationError(`"filter-cutoff": cut-off frequency is above Nyquist (1/2 sample rate (${fs / 2})), choose a lower cut-off frequency`);
  // scipy refuses Wn ≤ 0 with a ValueError; the block would pass it on as a server error.
  if (wn <= 0) throw new DspConfigurationError(`"filter-cutoff": cut-off frequency must be above 0 Hz, got ${p.filterCutoff}`);
  const sos = butterSos(p.filterOrder, wn, p.filterType).map((s) => s.map(Math.fround) as SosSection);
  if (!filterIsStable(p.filterOrder, p.filterCutoff, fs)) throw new DspConfigurationError(`"filter-cutoff": filter created is not stable; move the cut-off (${p.filterCutoff} Hz) away from 0 or Nyquist`);
  return sos;
}

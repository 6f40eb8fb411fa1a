// The spectral-analysis block's parameters (dsp-reference §5.1), read from the values the job or the
// run endpoint passes (typed by the catalog, or still the strings a DSP config stores) and checked
// by the rules that need no signal (§5.2). Every refusal names the parameter.
import { SPECTRAL_ANALYSIS_PARAMETERS, WAVELETS } from '../../impulse/dspParameters';
import { DspConfigurationError, type DspParams } from '../processingBlock';

export type FilterType = 'low' | 'high' | 'none';

export interface SpectralParameters {
  scaleAxes: number;
  inputDecimationRatio: number;
  filterType: FilterType;
  filterCutoff: number;
  filterOrder: number;
  analysisType: 'FFT' | 'Wavelet';
  fftLength: number;
  spectralPeaksCount: number;
  spectralPeaksThreshold: number;
  spectralPowerEdges: number[];
  doLog: boolean;
  doFftOverlap: boolean;
  waveletLevel: number;
  wavelet: string;
  extraLowFreq: boolean;
}

const DEFAULTS: Readonly<Record<string, string>> = Object.fromEntries(
  SPECTRAL_ANALYSIS_PARAMETERS.flatMap((g) => g.items).map((p) => [p.param, p.defaultValue]),
);

const DECIMATION_RATIOS = [1, 3, 10, 30, 100, 1000];

function raw(params: DspParams, name: string): string | number | boolean {
  return params[name] ?? DEFAULTS[name]!;
}

function number(params: DspParams, name: string): number {
  const value = raw(params, name);
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  if (!Number.isFinite(n)) throw new DspConfigurationError(`"${name}": expected a number, got ${JSON.stringify(value)}`);
  return n;
}

function integer(params: DspParams, name: string): number {
  const n = number(params, name);
  if (!Number.isInteger(n)) throw new DspConfigurationError(`"${name}": expected an integer, got ${n}`);
  return n;
}

function bool(params: DspParams, name: string): boolean {
  const value = raw(params, name);
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new DspConfigurationError(`"${name}": expected true or false, got ${JSON.stringify(value)}`);
}

function choice<T extends string>(params: DspParams, name: string, allowed: readonly T[]): T {
  const value = String(raw(params, name));
  if (!(allowed as readonly string[]).includes(value)) throw new DspConfigurationError(`"${name}": expected one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  return value as T;
}

/** "0.1, 0.5, 1.0" as the reference splits it (v1 only; other versions never read it). */
function edges(params: DspParams, version: number): number[] {
  if (version !== 1) return [];
  const value = raw(params, 'spectral-power-edges');
  const parts = String(value).split(',').map((item) => item.trim());
  const numbers = parts.map((item) => (item === '' ? Number.NaN : Number(item)));
  if (numbers.some((n) => !Number.isFinite(n))) {
    throw new DspConfigurationError(`"spectral-power-edges": expected comma-separated numbers, got ${JSON.stringify(value)}`);
  }
  return numbers;
}

const isPowerOfTwo = (n: number) => Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0;

/** Reads and checks the parameters (§5.2 rules that do not depend on the signal). */
export function readSpectralParameters(params: DspParams, version: number, frequency: number): SpectralParameters {
  if (![1, 2, 3, 4].includes(version)) throw new DspConfigurationError(`"implementationVersion": the spectral-analysis block has implementation versions 1, 2, 3 and 4, got ${version}`);
  const p: SpectralParameters = {
    scaleAxes: number(params, 'scale-axes'),
    inputDecimationRatio: integer(params, 'input-decimation-ratio'),
    filterType: choice(params, 'filter-type', ['low', 'high', 'none'] as const),
    filterCutoff: number(params, 'filter-cutoff'),
    filterOrder: integer(params, 'filter-order'),
    analysisType: choice(params, 'analysis-type', ['FFT', 'Wavelet'] as const),
    fftLength: integer(params, 'fft-length'),
    spectralPeaksCount: integer(params, 'spectral-peaks-count'),
    spectralPeaksThreshold: number(params, 'spectral-peaks-threshold'),
    spectralPowerEdges: edges(params, version),
    doLog: bool(params, 'do-log'),
    doFftOverlap: bool(params, 'do-fft-overlap'),
    waveletLevel: integer(params, 'wavelet-level'),
    wavelet: choice(params, 'wavelet', WAVELETS),
    extraLowFreq: bool(params, 'extra-low-freq'),
  };
  if (!isPowerOfTwo(p.fftLength)) throw new DspConfigurationError(`"fft-length": FFT length must be a power of 2, got ${p.fftLength}`);
  const usesFft = version === 1 || p.analysisType === 'FFT' || version < 3;
  // The reference crashes (IndexError) on a 1-point FFT; we say why instead.
  if (usesFft && p.fftLength < 2) throw new DspConfigurationError(`"fft-length": FFT length must be at least 2, got ${p.fftLength}`);
  if (!DECIMATION_RATIOS.includes(p.inputDecimationRatio)) {
    throw new DspConfigurationError(`"input-decimation-ratio": expected one of ${DECIMATION_RATIOS.join(', ')}, got ${p.inputDecimationRatio}`);
  }
  const filtered = p.filterType === 'low' || p.filterType === 'high';
  if (p.inputDecimationRatio > 1) {
    if (version < 4) throw new DspConfigurationError(`"input-decimation-ratio": input decimation is only supported in implementation version 4 (this block is version ${version})`);
    const nyquist = frequency / 2 / p.inputDecimationRatio;
    if (filtered && p.filterCutoff > nyquist * 0.9) {
      throw new DspConfigurationError(`"input-decimation-ratio": decimation ratio ${p.inputDecimationRatio} is too high for a cut-off of ${p.filterCutoff} Hz (at most ${nyquist * 0.9} Hz after decimation); lower the ratio`);
    }
  }
  if (filtered && p.filterOrder < 0) throw new DspConfigurationError(`"filter-order": must be 0 or an even number from 2 to 8, got ${p.filterOrder}`);
  if (version === 1 && p.spectralPeaksCount < 0) throw new DspConfigurationError(`"spectral-peaks-count": must be at least 0, got ${p.spectralPeaksCount}`);
  if ((version >= 3 && p.analysisType === 'Wavelet') && p.waveletLevel < 0) throw new DspConfigurationError(`"wavelet-level": must be at least 0, got ${p.waveletLevel}`);
  return p;
}

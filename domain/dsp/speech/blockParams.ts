// Reading a block's parameters. The catalog hands them over as strings (DSPConfigRequest sends them
// so) or already typed; either way a value that is not what the parameter needs is refused with a
// DspConfigurationError naming it, never coerced to NaN.
import { DspConfigurationError, type DspInput, type DspParams } from '../processingBlock';

export function numberParam(params: DspParams, name: string, fallback: number): number {
  const raw = params[name];
  if (raw === undefined || raw === '') return fallback;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : Number.NaN;
  if (!Number.isFinite(value)) throw new DspConfigurationError(`"${name}" must be a number, got ${JSON.stringify(raw)}`);
  return value;
}

export function intParam(params: DspParams, name: string, fallback: number): number {
  const value = numberParam(params, name, fallback);
  if (!Number.isInteger(value)) throw new DspConfigurationError(`"${name}" must be an integer, got ${value}`);
  return value;
}

export function boolParam(params: DspParams, name: string, fallback: boolean): boolean {
  const raw = params[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new DspConfigurationError(`"${name}" must be true or false, got ${JSON.stringify(raw)}`);
}

export function stringParam(params: DspParams, name: string, fallback: string): string {
  const raw = params[name];
  return raw === undefined ? fallback : String(raw);
}

/** The versions a block reproduces; anything else is refused rather than silently run as another. */
export function checkVersion(type: string, versions: readonly number[], version: number): void {
  if (!versions.includes(version)) {
    throw new DspConfigurationError(`"implementation_version" of the ${type} block must be one of ${versions.join(', ')}, got ${version}`);
  }
}

/** Interleaved values must split into whole samples of every axis (dsp-reference 0.2). */
export function checkInterleaved(type: string, input: DspInput): number {
  const axes = input.axes.length;
  if (axes < 1) throw new DspConfigurationError(`"axes": the ${type} block needs at least one axis`);
  if (input.values.length % axes !== 0) {
    throw new DspConfigurationError(`"axes": ${input.values.length} values do not split into whole samples of ${axes} axes`);
  }
  return input.values.length / axes;
}

/** The audio blocks process exactly one axis and need a real sampling frequency. */
export function singleAxisSignal(type: string, input: DspInput): ArrayLike<number> {
  if (input.axes.length !== 1) {
    throw new DspConfigurationError(`"axes": ${type} blocks only support a single axis (got ${input.axes.length}); create one ${type} block per axis`);
  }
  if (!(input.frequency > 0) || !Number.isFinite(input.frequency)) {
    throw new DspConfigurationError(`"frequency": the ${type} block needs a positive sampling frequency, got ${input.frequency}`);
  }
  if (input.values.length < 1) throw new DspConfigurationError(`"values": the ${type} block needs a non-empty window`);
  return input.values;
}

export function checkFftLength(fftLength: number): void {
  if (!Number.isInteger(fftLength) || fftLength < 2 || (fftLength & (fftLength - 1)) !== 0) {
    throw new DspConfigurationError(`"fft_length" must be a power of 2 (at least 2), got ${fftLength}`);
  }
}

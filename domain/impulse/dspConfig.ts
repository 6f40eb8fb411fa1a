// A DSP block's config: parameter values as strings (DSPConfigRequest sends them so), checked
// against the block's descriptors and the cross-field rules of dsp-reference.md.
import { dspBlockDefinition, type DspBlockDefinition } from './blockCatalog';
import type { DspGroupItem, DspParameter } from './dspParameters';
import { processingBlocks } from '../dsp/blocks';
import { DspConfigurationError } from '../dsp/processingBlock';
import { framing } from '../dsp/speech/frames';
import { melFilterbank } from '../dsp/speech/melFilterbank';

export type DspConfigValues = Record<string, string>;

/** What the checks that depend on the impulse need: the block's version and its input's window. */
export interface DspConfigContext {
  implementationVersion: number;
  /** The input block's sampling frequency, when it has one. */
  frequencyHz?: number;
  windowSizeMs?: number;
  /**
   * Also check by running (dspRunCheckOf) once the other rules pass: the refusals of that run, which
   * the caller made (in the DSP pool, off the event loop) or may throw DspRunCheckNeeded to go and
   * make. Catches every refusal that depends on the parameters and the window's shape, not the data,
   * when the config is saved or a job requested rather than when the job runs. Absent for the run
   * endpoints, which run the block anyway (in the pool).
   */
  runRefusals?: (check: DspRunCheck) => string[];
}

/** Rows above which the check by running is skipped (the job still refuses): bounds its work. */
const CHECK_RUN_MAX_ROWS = 100_000;

/**
 * The check by running: the block run once on a synthetic window of the input's size, with one whole
 * config. Plain data, so that it runs in a pool thread, and that an answer can be matched to the
 * config it was made for (sameDspRunCheck).
 */
export interface DspRunCheck {
  type: string;
  /** Every parameter (defaults filled in). */
  config: DspConfigValues;
  implementationVersion: number;
  frequencyHz: number;
  windowSizeMs: number;
}

/** A check by running and what the block refused in it (an empty list: nothing). */
export interface DspRunAnswer {
  check: DspRunCheck;
  refusals: string[];
}

/**
 * Thrown through a decider that needs the answer of a check by running it was not given: the command
 * handler runs the check (in the DSP pool) and sends the command again with the answer, so the
 * decider stays pure and the run stays off the event loop.
 */
export class DspRunCheckNeeded extends Error {
  constructor(readonly check: DspRunCheck) {
    super(`The ${check.type} config needs its check by running`);
    this.name = 'DspRunCheckNeeded';
  }
}

const parametersOf = (def: DspBlockDefinition): DspParameter[] => def.parameters.flatMap((g) => g.items);

/**
 * Every parameter with its default. The block's generate_features receives every parameter,
 * whatever its implementation version shows, so a stored config holds them all.
 */
export function defaultDspConfig(def: DspBlockDefinition): DspConfigValues {
  return Object.fromEntries(parametersOf(def).map((p) => [p.param, p.defaultValue]));
}

/** Only the keys present in `changes` overwrite; the rest keep their saved (or default) value. */
export function resolveDspConfig(def: DspBlockDefinition, saved: DspConfigValues | null, changes: DspConfigValues): DspConfigValues {
  return { ...defaultDspConfig(def), ...saved, ...changes };
}

/** The SDK's config groups of DSPConfigResponse, each item with its current value. */
export function dspConfigGroups(def: DspBlockDefinition, context: DspConfigContext, saved: DspConfigValues | null): { group: string; items: DspGroupItem[] }[] {
  const values = { ...defaultDspConfig(def), ...saved };
  return def.parameters.map((g) => ({
    group: g.group,
    items: g.items.map(({ versions, ...item }) => ({
      ...item,
      value: values[item.param] ?? item.defaultValue,
      shouldShow: item.shouldShow && (versions === undefined || versions.includes(context.implementationVersion)),
    })),
  }));
}

const isPowerOfTwo = (n: number): boolean => Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;

/** `"fft_length": must be a power of 2, got "100"`: one message per refused parameter. */
export function validateDspConfig(def: DspBlockDefinition, config: DspConfigValues, context: DspConfigContext): string[] {
  const errors: string[] = [];
  const descriptors = new Map(parametersOf(def).map((p) => [p.param, p]));
  for (const key of Object.keys(config)) {
    if (!descriptors.has(key)) errors.push(`"${key}": unknown parameter of the ${def.info.type} block (known: ${[...descriptors.keys()].join(', ')})`);
  }
  const numbers: Record<string, number> = {};
  for (const p of descriptors.values()) {
    const raw = config[p.param] ?? p.defaultValue;
    const error = checkValue(p, raw);
    if (error) errors.push(`"${p.param}": ${error}`);
    else if (p.type === 'int' || p.type === 'float') numbers[p.param] = Number(raw);
  }
  if (errors.length > 0) return errors;
  const crossField = crossFieldErrors(def.info.type, config, numbers, context);
  if (crossField.length > 0 || !context.runRefusals) return crossField;
  const check = dspRunCheckOf(def, config, context);
  return check === undefined ? [] : context.runRefusals(check);
}

/**
 * The check by running a config needs, if any: none without the input's frequency and window, for
 * image blocks, for a version the block cannot run, or for a window above CHECK_RUN_MAX_ROWS rows.
 */
export function dspRunCheckOf(def: DspBlockDefinition, config: DspConfigValues, context: Omit<DspConfigContext, 'runRefusals'>): DspRunCheck | undefined {
  const type = def.info.type;
  const block = processingBlocks.get(type);
  const fs = context.frequencyHz;
  if (!block || fs === undefined || context.windowSizeMs === undefined || type === 'image') return undefined;
  const rows = Math.max(1, Math.floor((context.windowSizeMs * fs) / 1000));
  if (rows > CHECK_RUN_MAX_ROWS || !block.implementationVersions.includes(context.implementationVersion)) return undefined;
  return { type, config: { ...defaultDspConfig(def), ...config }, implementationVersion: context.implementationVersion, frequencyHz: fs, windowSizeMs: context.windowSizeMs };
}

/** Whether an answer made for `a` is the answer for `b`. */
export function sameDspRunCheck(a: DspRunCheck, b: DspRunCheck): boolean {
  const keys = Object.keys(a.config);
  return a.type === b.type && a.implementationVersion === b.implementationVersion && a.frequencyHz === b.frequencyHz && a.windowSizeMs === b.windowSizeMs
    && keys.length === Object.keys(b.config).length && keys.every((k) => Object.hasOwn(b.config, k) && a.config[k] === b.config[k]);
}

/**
 * What the block refuses when run on a synthetic window of the input's size: a deterministic signal,
 * one axis (the parameters' rules do not depend on the axis count). Only refusals that name one of
 * the block's parameters count; those about the data or the axes are the job's to report. CPU work
 * that grows with the window and the parameters: the service runs it in the DSP pool.
 */
export function dspRunRefusals(check: DspRunCheck): string[] {
  const block = processingBlocks.get(check.type);
  const def = dspBlockDefinition(check.type);
  if (!block || !def) return [];
  const params = new Set(parametersOf(def).map((p) => p.param));
  const rows = Math.max(1, Math.floor((check.windowSizeMs * check.frequencyHz) / 1000));
  const values = Float64Array.from({ length: rows }, (_, i) => 100 * Math.sin(0.37 * i) + (i % 13));
  try {
    block.run({ values, axes: ['x'], frequency: check.frequencyHz }, check.config, { implementationVersion: check.implementationVersion, drawGraphs: false });
    return [];
  } catch (error) {
    // Anything but a refusal is not the parameters' fault: the job reports it where it happens.
    if (!(error instanceof DspConfigurationError)) return [];
    const named = /^"([^"]+)"/.exec(error.message)?.[1];
    return named !== undefined && params.has(named) ? [error.message] : [];
  }
}

function checkValue(p: DspParameter, raw: string): string | undefined {
  switch (p.type) {
    case 'int':
    case 'float': {
      const pattern = p.type === 'int' ? /^-?\d+$/ : /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
      const value = Number(raw);
      if (!pattern.test(raw.trim()) || !Number.isFinite(value)) return `expected ${p.type === 'int' ? 'an integer' : 'a number'}, got "${raw}"`;
      if (p.minVal !== undefined && value < p.minVal) return `must be at least ${p.minVal}, got ${value}`;
      if (p.maxVal !== undefined && value > p.maxVal) return `must be at most ${p.maxVal}, got ${value}`;
      return undefined;
    }
    case 'boolean':
      return raw === 'true' || raw === 'false' ? undefined : `expected "true" or "false", got "${raw}"`;
    case 'select': {
      const allowed = (p.selectOptions ?? []).map((o) => o.value);
      return allowed.includes(raw) ? undefined : `expected one of ${allowed.map((v) => `"${v}"`).join(', ')}, got "${raw}"`;
    }
    case 'string':
      return undefined;
  }
}

/** Frames of `frameLength`/`frameStride` seconds in the window: the blocks' own framing, so both agree. */
function frameCount(frequencyHz: number, windowSizeMs: number, frameLength: number, frameStride: number, version: number): number {
  return framing(version, Math.floor((frequencyHz * windowSizeMs) / 1000), frequencyHz, frameLength, frameStride).count;
}

function crossFieldErrors(type: string, config: DspConfigValues, n: Record<string, number>, context: DspConfigContext): string[] {
  const errors: string[] = [];
  const fs = context.frequencyHz;
  const version = context.implementationVersion;
  const audio = type === 'mfe' || type === 'mfcc' || type === 'spectrogram';
  if (type === 'spectral-analysis') {
    const filtered = config['filter-type'] !== undefined && config['filter-type'] !== 'none';
    const order = n['filter-order']!;
    const ratio = Number(config['input-decimation-ratio'] ?? '1');
    if (!isPowerOfTwo(n['fft-length']!)) errors.push(`"fft-length": must be a power of 2, got ${n['fft-length']}`);
    if (ratio > 1 && version !== 4) errors.push(`"input-decimation-ratio": a ratio above 1 needs implementation version 4 (this block is version ${version})`);
    if (filtered && order > 0 && order % 2 !== 0) errors.push(`"filter-order": must be 0 or an even number from 2 to 8, got ${order}`);
    if (filtered && fs !== undefined) {
      const nyquist = fs / 2 / ratio;
      if (ratio > 1 && n['filter-cutoff']! > 0.9 * nyquist) errors.push(`"filter-cutoff": must be at most ${0.9 * nyquist} Hz with decimation ratio ${ratio}, got ${n['filter-cutoff']}`);
      else if (order > 0 && n['filter-cutoff']! >= nyquist) errors.push(`"filter-cutoff": cut-off frequency is above Nyquist (${nyquist} Hz), got ${n['filter-cutoff']}`);
    }
  }
  if (audio) {
    if (!isPowerOfTwo(n.fft_length!)) errors.push(`"fft_length": must be a power of 2, got ${n.fft_length}`);
    if (fs !== undefined && type === 'spectrogram') {
      if (n.frame_length! < 4 / fs) errors.push(`"frame_length": must be at least ${4 / fs} s (4 samples), got ${n.frame_length}`);
      if (n.frame_stride! < 4 / fs) errors.push(`"frame_stride": must be at least ${4 / fs} s (4 samples), got ${n.frame_stride}`);
    }
    if (fs !== undefined && context.windowSizeMs !== undefined && errors.length === 0) {
      const frames = frameCount(fs, context.windowSizeMs, n.frame_length!, n.frame_stride!, version);
      if (frames < 1) errors.push(`"frame_length": frame length is larger than your window size (${context.windowSizeMs} ms)`);
      else if (frames > 500) errors.push(`"frame_stride": ${frames} frames in a window, at most 500 are allowed; increase the frame stride`);
    }
  }
  if ((type === 'mfe' || type === 'spectrogram') && version >= 3 && n.noise_floor_db === -12) {
    // The blocks scale by (noise floor + 12) dB: -12 divides by zero.
    errors.push(`"noise_floor_db": cannot be -12 (the scaling would divide by zero), got -12`);
  }
  if (type === 'mfe' || type === 'mfcc') {
    if (fs !== undefined && n.high_frequency! > fs / 2) errors.push(`"high_frequency": must be at most half the sampling frequency (${fs / 2} Hz), got ${n.high_frequency}`);
    if (n.high_frequency! !== 0 && n.high_frequency! <= n.low_frequency!) errors.push(`"high_frequency": must be above "low_frequency" (${n.low_frequency}), got ${n.high_frequency}`);
    const winSizeUsed = type === 'mfcc' ? n.win_size! > 0 : version <= 2;
    if (winSizeUsed && n.win_size! % 2 === 0) errors.push(`"win_size": must be odd${type === 'mfcc' ? ' (or 0 to disable normalization)' : ''}, got ${n.win_size}`);
  }
  if (type === 'mfcc' && n.num_cepstral! > n.num_filters!) errors.push(`"num_cepstral": must be at most "num_filters" (${n.num_filters}), got ${n.num_cepstral}`);
  if ((type === 'mfe' || type === 'mfcc') && fs !== undefined && errors.length === 0 && isPowerOfTwo(n.fft_length!)) {
    // The filterbank the block will build: the old mel scale (versions up to 3) gives rows of zeros
    // for many filters over a short FFT, which the block refuses at run time.
    try {
      melFilterbank(n.num_filters!, n.fft_length! / 2 + 1, fs, n.low_frequency!, n.high_frequency!, version <= 3);
    } catch (error) {
      if (!(error instanceof DspConfigurationError)) throw error;
      errors.push(error.message);
    }
  }
  return errors;
}

// The SDK's TunerSpaceImpulse list, checked against the project's impulse and turned into the stored
// space (tunerSpace.ts). Every choice must be valid on its own for the project: a window the input
// can take, a DSP parameter value its block accepts for every window of the same space impulse (the
// other parameters at their defaults), a model the learn block can build. A space with nothing to
// choose from in some list yields no impulse: a 400 naming the list.
import { dspBlockDefinition } from '../impulse/blockCatalog';
import { validateDspConfig } from '../impulse/dspConfig';
import { MAX_WINDOW_MS } from '../impulse/impulseValidation';
import { DEFAULT_KERAS_SETTINGS, LAYER_LIMITS } from '../learn/kerasSettings';
import { ValidationError } from '../shared/errors';
import { checkNumber } from '../shared/numberRules';
import { SPACE_LIMITS, type TunerDspChoice, type TunerInputChoice, type TunerKerasChoice, type TunerSpaceImpulse, type TunerWindow } from './tunerSpace';

/** The SDK's TunerSpaceImpulse as it arrives (its lists are `any[]`). */
export interface TunerSpaceInput {
  parameters?: object;
  inputBlocks: unknown[];
  dspBlocks: unknown[];
  learnBlocks: unknown[][];
}

/** What a space is checked against. */
export interface TunerProjectContext {
  /** Devices the service estimates latency for. */
  latencyDevices: readonly string[];
  /** The project's impulse (its default one); null when it has none. */
  impulse: { inputType: string; frequencyHz?: number; learnTypes: readonly string[] } | null;
}

const KERAS_TYPES = ['keras', 'keras-regression'] as const;
const KERAS_FIELDS = ['type', 'dimension', 'learningRate', 'trainingCycles', 'batchSize'];

const noImpulse = (field: string) => new ValidationError(`${field} is empty: the space yields no impulse`, 'EMPTY_SPACE');

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A non-empty list of at most `max` items; a 400 naming `field` otherwise. */
function list(value: unknown, field: string, max: number = SPACE_LIMITS.choices): unknown[] {
  if (!Array.isArray(value)) throw new ValidationError(`${field} must be a list`);
  if (value.length === 0) throw noImpulse(field);
  if (value.length > max) throw new ValidationError(`${field}: at most ${max} choices`);
  return value;
}

function record(value: unknown, field: string): Record<string, unknown> {
  if (!isRecord(value)) throw new ValidationError(`${field} must be an object`);
  return value;
}

function parseWindows(block: Record<string, unknown>, field: string): TunerWindow[] {
  return list(block.window, `${field}.window`).map((w, k) => {
    const where = `${field}.window[${k}]`;
    const window = record(w, where);
    const windowSizeMs = checkNumber(window.windowSizeMs as number, `${where}.windowSizeMs`, { min: 1, max: MAX_WINDOW_MS, integer: true });
    // A larger increase would skip data between windows.
    const windowIncreaseMs = checkNumber(window.windowIncreaseMs as number, `${where}.windowIncreaseMs`, { min: 1, max: windowSizeMs, integer: true });
    return { windowSizeMs, windowIncreaseMs };
  });
}

function parseInput(value: unknown, field: string, inputType: string): TunerInputChoice {
  const block = record(value, field);
  if (block.type !== 'time-series') throw new ValidationError(`${field}.type: the tuner searches time-series inputs, got ${JSON.stringify(block.type)}`, 'TUNER_INPUT_UNSUPPORTED');
  if (inputType !== 'time-series') throw new ValidationError(`${field}.type: the project's impulse reads "${inputType}" data, not time series`, 'TUNER_INPUT_MISMATCH');
  return { type: 'time-series', windows: parseWindows(block, field) };
}

const dspValue = (v: unknown, field: string): string => {
  if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return String(v);
  throw new ValidationError(`${field} must be a string, a number or a boolean`);
};

function parseDsp(value: unknown, field: string, windows: readonly TunerWindow[], frequencyHz: number | undefined): TunerDspChoice {
  const block = record(value, field);
  const def = typeof block.type === 'string' ? dspBlockDefinition(block.type) : undefined;
  if (!def) throw new ValidationError(`${field}.type: ${JSON.stringify(block.type)} is not a DSP block of this service`, 'UNKNOWN_DSP_BLOCK');
  if (!def.inputTypes.includes('time-series')) throw new ValidationError(`${field}.type: the ${def.info.type} block does not read time series`, 'TUNER_INPUT_MISMATCH');
  const parameters = Object.entries(block)
    .filter(([name]) => name !== 'type')
    .map(([name, values]) => {
      const where = `${field}["${name}"]`;
      const strings = list(values, where, SPACE_LIMITS.values).map((v, k) => dspValue(v, `${where}[${k}]`));
      strings.forEach((v, k) => {
        for (const w of windows) {
          const [problem] = validateDspConfig(def, { [name]: v }, { implementationVersion: def.info.latestImplementationVersion, frequencyHz, windowSizeMs: w.windowSizeMs });
          if (problem) throw new ValidationError(`${where}[${k}]: ${problem} (with a window of ${w.windowSizeMs} ms)`, 'INVALID_SPACE_CHOICE');
        }
      });
      return { name, values: [...new Set(strings)] };
    });
  // The block at its defaults must run on every window too.
  for (const w of windows) {
    const [problem] = validateDspConfig(def, {}, { implementationVersion: def.info.latestImplementationVersion, frequencyHz, windowSizeMs: w.windowSizeMs });
    if (problem) throw new ValidationError(`${field}: ${problem} (with a window of ${w.windowSizeMs} ms)`, 'INVALID_SPACE_CHOICE');
  }
  return { type: def.info.type, parameters };
}

function numbers(value: unknown, field: string, fallback: number, rule: { min: number; max: number; integer?: boolean }): number[] {
  if (value === undefined) return [fallback];
  return [...new Set(list(value, field, SPACE_LIMITS.values).map((v, k) => checkNumber(v as number, `${field}[${k}]`, rule)))];
}

function parseKeras(value: unknown, field: string, learnTypes: readonly string[], maxCycles: number): TunerKerasChoice {
  const block = record(value, field);
  const type = block.type;
  if (!(KERAS_TYPES as readonly unknown[]).includes(type)) throw new ValidationError(`${field}.type: the tuner trains keras and keras-regression blocks, got ${JSON.stringify(type)}`, 'TUNER_LEARN_UNSUPPORTED');
  if (!learnTypes.includes(type as string)) throw new ValidationError(`${field}.type: the project's impulse has no ${String(type)} learn block (it has ${learnTypes.join(', ') || 'none'})`, 'TUNER_LEARN_MISMATCH');
  const unknown = Object.keys(block).filter((k) => !KERAS_FIELDS.includes(k));
  if (unknown.length > 0) throw new ValidationError(`${field}: unknown field ${JSON.stringify(unknown[0])} (known: ${KERAS_FIELDS.join(', ')})`);
  const denseStacks =
    block.dimension === undefined
      ? [{ neurons: DEFAULT_KERAS_SETTINGS.visualLayers.map((l) => l.neurons!) }]
      : list(block.dimension, `${field}.dimension`).map((stack, k) => {
          const where = `${field}.dimension[${k}]`;
          if (!Array.isArray(stack) || stack.length > SPACE_LIMITS.layers) throw new ValidationError(`${where} must be a list of at most ${SPACE_LIMITS.layers} dense layer sizes`);
          return { neurons: stack.map((n, l) => checkNumber(n as number, `${where}[${l}]`, LAYER_LIMITS.neurons)) };
        });
  const learningRates = numbers(block.learningRate, `${field}.learningRate`, DEFAULT_KERAS_SETTINGS.learningRate, { min: 1e-7, max: 10 });
  const trainingCycles = numbers(block.trainingCycles, `${field}.trainingCycles`, maxCycles, { min: 1, max: maxCycles, integer: true });
  const batchSizes = numbers(block.batchSize, `${field}.batchSize`, DEFAULT_KERAS_SETTINGS.batchSize, { min: 1, max: 65_536, integer: true });
  return { type: type as TunerKerasChoice['type'], denseStacks, learningRates, trainingCycles, batchSizes };
}

/** The stored space; a ValidationError naming the first choice that is not valid for the project. */
export function parseTunerSpace(space: readonly TunerSpaceInput[], context: TunerProjectContext, maxTrainingCycles: number): TunerSpaceImpulse[] {
  if (!Array.isArray(space)) throw new ValidationError('space must be a list of impulses');
  if (space.length === 0) return [];
  if (space.length > SPACE_LIMITS.impulses) throw new ValidationError(`space: at most ${SPACE_LIMITS.impulses} impulses`);
  const impulse = context.impulse;
  if (!impulse) throw new ValidationError('space: the project has no impulse to check the space against: create one first', 'NO_IMPULSE');
  let checks = 0;
  return space.map((s, i) => {
    const field = `space[${i}]`;
    const entry = record(s, field);
    const inputBlocks = list(entry.inputBlocks, `${field}.inputBlocks`).map((b, j) => parseInput(b, `${field}.inputBlocks[${j}]`, impulse.inputType));
    const windows = inputBlocks.flatMap((b) => b.windows);
    if (windows.length > SPACE_LIMITS.windows) throw new ValidationError(`${field}.inputBlocks: ${windows.length} windows in all; at most ${SPACE_LIMITS.windows}`, 'SPACE_TOO_LARGE');
    const values = list(entry.dspBlocks, `${field}.dspBlocks`).reduce<number>((n, b) => n + 1 + (isRecord(b) ? Object.entries(b).reduce((m, [k, v]) => m + (k !== 'type' && Array.isArray(v) ? v.length : 0), 0) : 0), 0);
    checks += values * windows.length;
    if (checks > SPACE_LIMITS.checks) {
      const what = i === 0 ? `${windows.length} windows by ${values} values and defaults` : `with the impulses before it; here ${windows.length} windows by ${values} values and defaults`;
      throw new ValidationError(`${field}: checking it takes ${checks} DSP checks (${what}); at most ${SPACE_LIMITS.checks}: list fewer windows or values`, 'SPACE_TOO_LARGE');
    }
    const dspBlocks = list(entry.dspBlocks, `${field}.dspBlocks`).map((b, j) => parseDsp(b, `${field}.dspBlocks[${j}]`, windows, impulse.frequencyHz));
    const learnBlocks = list(entry.learnBlocks, `${field}.learnBlocks`).map((set, j) => {
      const where = `${field}.learnBlocks[${j}]`;
      const blocks = list(set, where);
      if (blocks.length !== 1) throw new ValidationError(`${where}: the tuner trains one learn block per impulse, got ${blocks.length}`, 'TUNER_LEARN_UNSUPPORTED');
      return { blocks: blocks.map((b, k) => parseKeras(b, `${where}[${k}]`, impulse.learnTypes, maxTrainingCycles)) };
    });
    return { inputBlocks, dspBlocks, learnBlocks };
  });
}

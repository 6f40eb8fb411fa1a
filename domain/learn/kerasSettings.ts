// The settings of a keras (classification) learn block in visual mode: the SDK's KerasVisualLayer list
// and the training parameters, with the real service's defaults for motion features. Expert mode (a
// Python script) is not run by this service. A change is partial (SetKerasParameterRequest); the
// decider merges it into the current settings and checks the whole, so a stored stack is always valid.
import { ValidationError } from '../shared/errors';
import { checkNumber } from '../shared/numberRules';

/** The visual layers this service builds (domain/learn/kerasNetwork.ts). */
export const KERAS_LAYER_TYPES = ['dense', 'dropout', 'flatten', 'reshape', 'conv1d', 'conv2d'] as const;
export type KerasLayerType = (typeof KERAS_LAYER_TYPES)[number];

/** The SDK's KerasVisualLayer, as stored: only the fields its type uses. */
export interface KerasLayer {
  type: KerasLayerType;
  /** dense: units; conv1d/conv2d: filters. */
  neurons?: number;
  /** conv1d/conv2d. */
  kernelSize?: number;
  /** conv1d/conv2d: convolution layers before the pooling layer. */
  stack?: number;
  dropoutRate?: number;
  /** reshape: the columns of the 2-D shape the features are laid out in. */
  columns?: number;
  /** false: kept in the list, not built. */
  enabled?: boolean;
}

export interface KerasSettings {
  visualLayers: KerasLayer[];
  trainingCycles: number;
  learningRate: number;
  batchSize: number;
  /** Fraction of the training windows held out for validation (the real service's validation set size). */
  trainTestSplit: number;
  autoClassWeights: boolean;
  minimumConfidenceRating: number;
}

/** The real service's defaults for a classifier on motion (spectral) features. */
export const DEFAULT_KERAS_SETTINGS: KerasSettings = {
  visualLayers: [
    { type: 'dense', neurons: 20 },
    { type: 'dense', neurons: 10 },
  ],
  trainingCycles: 30,
  learningRate: 0.0005,
  batchSize: 32,
  trainTestSplit: 0.2,
  autoClassWeights: false,
  minimumConfidenceRating: 0.6,
};

export const DEFAULT_BATCH_SIZE = 32;
export const MAX_LAYERS = 40;
export const LAYER_LIMITS = {
  neurons: { min: 1, max: 4096, integer: true },
  kernelSize: { min: 1, max: 64, integer: true },
  stack: { min: 1, max: 8, integer: true },
  dropoutRate: { min: 0, max: 0.95 },
  columns: { min: 1, max: 1_000_000, integer: true },
} as const;

/** A settings change as the SDK sends it (SetKerasParameterRequest): only the fields given change. */
export type KerasSettingsChange = Partial<KerasSettings> & { mode?: string; script?: string };

const LAYER_FIELDS: Record<KerasLayerType, readonly (keyof typeof LAYER_LIMITS)[]> = {
  dense: ['neurons'],
  dropout: ['dropoutRate'],
  flatten: [],
  reshape: ['columns'],
  conv1d: ['neurons', 'kernelSize', 'stack'],
  conv2d: ['neurons', 'kernelSize', 'stack'],
};

const LAYER_DEFAULTS: Partial<Record<keyof typeof LAYER_LIMITS, number>> = { kernelSize: 3, stack: 1, dropoutRate: 0.25 };

/** One layer checked and reduced to the fields its type uses (a missing kernel size, stack or rate gets the real service's default). */
export function checkLayer(layer: KerasLayer, field: string): KerasLayer {
  if (typeof layer !== 'object' || layer === null) throw new ValidationError(`${field} must be a layer object`);
  if (!(KERAS_LAYER_TYPES as readonly string[]).includes(layer.type)) {
    throw new ValidationError(`${field}.type: "${String(layer.type)}" is not a visual layer this service builds (${KERAS_LAYER_TYPES.join(', ')})`, 'UNSUPPORTED_LAYER');
  }
  const out: KerasLayer = { type: layer.type };
  for (const name of LAYER_FIELDS[layer.type]) {
    const value = layer[name] ?? LAYER_DEFAULTS[name];
    if (value === undefined) throw new ValidationError(`${field}.${name} is required for a ${layer.type} layer`);
    out[name] = checkNumber(value, `${field}.${name}`, LAYER_LIMITS[name]);
  }
  if (layer.enabled !== undefined) {
    if (typeof layer.enabled !== 'boolean') throw new ValidationError(`${field}.enabled must be a boolean`);
    if (!layer.enabled) out.enabled = false;
  }
  return out;
}

/** The settings after `change`, checked whole; a ValidationError naming the field otherwise. */
export function applyKerasChange(current: KerasSettings, change: KerasSettingsChange): KerasSettings {
  if (change.mode !== undefined && change.mode !== 'visual') {
    throw new ValidationError('mode: only visual mode is supported by this service (expert mode, a Python script, is not run)', 'EXPERT_MODE_UNSUPPORTED');
  }
  if (change.script !== undefined && change.script !== '') {
    throw new ValidationError('script: only visual mode is supported by this service (expert mode, a Python script, is not run)', 'EXPERT_MODE_UNSUPPORTED');
  }
  const next: KerasSettings = { ...current };
  if (change.visualLayers !== undefined) {
    if (!Array.isArray(change.visualLayers)) throw new ValidationError('visualLayers must be a list of layers');
    if (change.visualLayers.length > MAX_LAYERS) throw new ValidationError(`visualLayers: at most ${MAX_LAYERS} layers`);
    next.visualLayers = change.visualLayers.map((l, i) => checkLayer(l, `visualLayers[${i}]`));
  }
  if (change.trainingCycles !== undefined) next.trainingCycles = checkNumber(change.trainingCycles, 'trainingCycles', { min: 1, max: 10_000, integer: true });
  if (change.learningRate !== undefined) {
    next.learningRate = checkNumber(change.learningRate, 'learningRate', { min: 0, max: 10 });
    if (next.learningRate === 0) throw new ValidationError('learningRate must be above 0');
  }
  if (change.batchSize !== undefined) next.batchSize = checkNumber(change.batchSize, 'batchSize', { min: 1, max: 65_536, integer: true });
  if (change.trainTestSplit !== undefined) next.trainTestSplit = checkNumber(change.trainTestSplit, 'trainTestSplit', { min: 0, max: 0.9 });
  if (change.autoClassWeights !== undefined) {
    if (typeof change.autoClassWeights !== 'boolean') throw new ValidationError('autoClassWeights must be a boolean');
    next.autoClassWeights = change.autoClassWeights;
  }
  if (change.minimumConfidenceRating !== undefined) next.minimumConfidenceRating = checkNumber(change.minimumConfidenceRating, 'minimumConfidenceRating', { min: 0, max: 1 });
  return next;
}

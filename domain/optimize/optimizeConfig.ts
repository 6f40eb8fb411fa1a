// The tuner's config for a project (the SDK's OptimizeConfig): the target device and its budget, the
// latency aimed at, how many trials and how many at once, the training cycles a trial may use, the
// search algorithm and the space. The SDK sends the whole config with each save; the fields this
// service acts on are checked and stored, the others (objectives, SEM, MOMF, ...) have no effect.
import { ValidationError } from '../shared/errors';
import { checkNumber } from '../shared/numberRules';
import { checkText, NAME_RULE } from '../shared/textRules';
import { parseTunerSpace, type TunerProjectContext, type TunerSpaceInput } from './tunerSpaceInput';
import type { TunerSpaceImpulse } from './tunerSpace';

export const TUNING_ALGORITHMS = ['random', 'hyperband'] as const;
export type TuningAlgorithm = (typeof TUNING_ALGORITHMS)[number];

export interface TargetDevice {
  /** A device the service estimates latency for (domain/learn/kerasPerformance.ts). */
  name: string;
  /** Bytes. */
  ram: number;
  rom: number;
}

export interface OptimizeSettings {
  name: string | null;
  targetDevice: TargetDevice;
  /** Milliseconds per inference on the target device. */
  targetLatency: number;
  tuningMaxTrials: number;
  tuningWorkers: number;
  /** Most training cycles a trial's model trains for. */
  trainingCycles: number;
  tuningAlgorithm: TuningAlgorithm;
  /** Empty: the job derives a space from the project's impulse. */
  space: TunerSpaceImpulse[];
}

/** What a client sends (the SDK's OptimizeConfig, the fields this service reads). */
export interface OptimizeConfigInput {
  name?: string;
  targetDevice: { name: string; ram?: number; rom?: number };
  targetLatency: number;
  tuningMaxTrials?: number;
  tuningWorkers?: number;
  trainingCycles?: number;
  tuningAlgorithm?: string;
  space?: TunerSpaceInput[];
}

export const OPTIMIZE_LIMITS = {
  /** A millisecond to a minute per inference. */
  targetLatency: { min: 1, max: 60_000 },
  /** 1 KiB to 64 GiB. */
  memory: { min: 1024, max: 2 ** 36, integer: true },
  tuningMaxTrials: { min: 1, max: 1000, integer: true },
  tuningWorkers: { min: 1, max: 64, integer: true },
  trainingCycles: { min: 1, max: 10_000, integer: true },
} as const;

/** The real service's defaults: a Cortex-M4F with 128 KiB of RAM and 1 MiB of flash, 100 ms. */
export const DEFAULT_OPTIMIZE_SETTINGS: OptimizeSettings = {
  name: null,
  targetDevice: { name: 'cortex-m4f-80mhz', ram: 128 * 1024, rom: 1024 * 1024 },
  targetLatency: 100,
  tuningMaxTrials: 30,
  tuningWorkers: 3,
  trainingCycles: 30,
  tuningAlgorithm: 'random',
  space: [],
};

/** The config as stored, from what a client sent; a ValidationError naming the field otherwise. */
export function checkOptimizeConfig(input: OptimizeConfigInput, context: TunerProjectContext): OptimizeSettings {
  if (typeof input !== 'object' || input === null) throw new ValidationError('the config must be an object');
  const device = input.targetDevice;
  if (typeof device !== 'object' || device === null) throw new ValidationError('targetDevice is required: {name, ram, rom}');
  const deviceName = checkText(device.name, 'targetDevice.name', NAME_RULE);
  if (!context.latencyDevices.includes(deviceName)) {
    throw new ValidationError(`targetDevice.name: "${deviceName}" is not a device this service estimates latency for (${context.latencyDevices.join(', ')})`, 'UNKNOWN_DEVICE');
  }
  for (const field of ['ram', 'rom'] as const) {
    if (device[field] === undefined || device[field] === 0) throw new ValidationError(`targetDevice.${field}: the device's ${field.toUpperCase()} in bytes is required (the tuner marks trials over it)`, 'DEVICE_MEMORY_REQUIRED');
  }
  const algorithm = input.tuningAlgorithm ?? DEFAULT_OPTIMIZE_SETTINGS.tuningAlgorithm;
  if (!(TUNING_ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw new ValidationError(`tuningAlgorithm: "${algorithm}" is not run by this service (${TUNING_ALGORITHMS.join(', ')})`, 'ALGORITHM_UNSUPPORTED');
  }
  const trainingCycles = checkNumber(input.trainingCycles ?? DEFAULT_OPTIMIZE_SETTINGS.trainingCycles, 'trainingCycles', OPTIMIZE_LIMITS.trainingCycles);
  return {
    name: input.name === undefined || input.name === '' ? null : checkText(input.name, 'name', NAME_RULE),
    targetDevice: {
      name: deviceName,
      ram: checkNumber(device.ram!, 'targetDevice.ram', OPTIMIZE_LIMITS.memory),
      rom: checkNumber(device.rom!, 'targetDevice.rom', OPTIMIZE_LIMITS.memory),
    },
    targetLatency: checkNumber(input.targetLatency, 'targetLatency', OPTIMIZE_LIMITS.targetLatency),
    tuningMaxTrials: checkNumber(input.tuningMaxTrials ?? DEFAULT_OPTIMIZE_SETTINGS.tuningMaxTrials, 'tuningMaxTrials', OPTIMIZE_LIMITS.tuningMaxTrials),
    tuningWorkers: checkNumber(input.tuningWorkers ?? DEFAULT_OPTIMIZE_SETTINGS.tuningWorkers, 'tuningWorkers', OPTIMIZE_LIMITS.tuningWorkers),
    trainingCycles,
    tuningAlgorithm: algorithm as TuningAlgorithm,
    space: parseTunerSpace(input.space ?? [], context, trainingCycles),
  };
}

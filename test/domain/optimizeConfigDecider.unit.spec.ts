import { describe, expect, it } from 'vitest';
import { DEFAULT_OPTIMIZE_SETTINGS, type OptimizeConfigInput, type OptimizeSettings } from '../../domain/optimize/optimizeConfig';
import { optimizeConfigDecider, type OptimizeConfigCommand } from '../../domain/optimize/optimizeConfigDecider';
import type { OptimizeConfigSet } from '../../domain/optimize/optimizeEvents';
import type { TunerProjectContext, TunerSpaceInput } from '../../domain/optimize/tunerSpaceInput';
import { ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(optimizeConfigDecider);
const now = new Date('2026-11-27T10:00:00.000Z');
/** A motion project: time series at 100 Hz, a keras classifier. */
const motion: TunerProjectContext = { latencyDevices: ['cortex-m4f-80mhz', 'raspberry-pi-4'], impulse: { inputType: 'time-series', frequencyHz: 100, learnTypes: ['keras', 'anomaly'] } };
const device = { name: 'cortex-m4f-80mhz', ram: 131072, rom: 524288 };
const set = (config: Partial<OptimizeConfigInput>, context = motion): OptimizeConfigCommand => ({ type: 'SetOptimizeConfig', data: { projectId: 3, config: { targetDevice: device, targetLatency: 100, ...config }, context, now } });
const configSet = (config: OptimizeSettings): OptimizeConfigSet => ({ type: 'OptimizeConfigSet', data: { projectId: 3, config, set: now.toISOString() } });

const space = (overrides: Partial<TunerSpaceInput> = {}): TunerSpaceInput => ({
  inputBlocks: [{ type: 'time-series', window: [{ windowSizeMs: 1000, windowIncreaseMs: 250 }, { windowSizeMs: 2000, windowIncreaseMs: 500 }] }],
  dspBlocks: [{ type: 'spectral-analysis', 'fft-length': [16, 64], 'do-log': [true, false] }],
  learnBlocks: [[{ type: 'keras', dimension: [[20, 10], [40]], learningRate: [0.005, 0.0005], trainingCycles: [10, 30] }]],
  ...overrides,
});

describe('a project without a tuner config', () => {
  it('records the config with the defaults for what the client left out', () => {
    spec.given([]).when(set({})).then([configSet({ ...DEFAULT_OPTIMIZE_SETTINGS, targetDevice: device })]);
  });

  it('records every field it acts on as sent', () => {
    spec.given([]).when(set({ name: 'Small', targetLatency: 20, tuningMaxTrials: 8, tuningWorkers: 2, trainingCycles: 40, tuningAlgorithm: 'hyperband' }))
      .then([configSet({ ...DEFAULT_OPTIMIZE_SETTINGS, name: 'Small', targetDevice: device, targetLatency: 20, tuningMaxTrials: 8, tuningWorkers: 2, trainingCycles: 40, tuningAlgorithm: 'hyperband' })]);
  });

  it('stores a valid space in its own shape: windows, DSP values as strings, dense stacks', () => {
    spec.given([]).when(set({ space: [space()] })).thenMatches((events) => {
      expect(events[0]!.data.config.space).toEqual([
        {
          inputBlocks: [{ type: 'time-series', windows: [{ windowSizeMs: 1000, windowIncreaseMs: 250 }, { windowSizeMs: 2000, windowIncreaseMs: 500 }] }],
          dspBlocks: [{ type: 'spectral-analysis', parameters: [{ name: 'fft-length', values: ['16', '64'] }, { name: 'do-log', values: ['true', 'false'] }] }],
          learnBlocks: [{ blocks: [{ type: 'keras', denseStacks: [{ neurons: [20, 10] }, { neurons: [40] }], learningRates: [0.005, 0.0005], trainingCycles: [10, 30], batchSizes: [32] }] }],
        },
      ]);
    });
  });

  it('gives a model left without choices the keras defaults, trained up to the config\'s cycles', () => {
    spec.given([]).when(set({ trainingCycles: 12, space: [space({ learnBlocks: [[{ type: 'keras' }]] })] })).thenMatches((events) => {
      expect(events[0]!.data.config.space[0]!.learnBlocks).toEqual([{ blocks: [{ type: 'keras', denseStacks: [{ neurons: [20, 10] }], learningRates: [0.0005], trainingCycles: [12], batchSizes: [32] }] }]);
    });
  });
});

describe('a tuner config refused with the problem named', () => {
  const refused = (config: Partial<OptimizeConfigInput>, message: RegExp, context = motion) => spec.given([]).when(set(config, context)).thenThrows(ValidationError, message);

  it('needs a target device the service estimates latency for, with RAM and ROM', () => {
    refused({ targetDevice: { name: 'toaster', ram: 1024, rom: 1024 } }, /targetDevice.name: "toaster" is not a device.*cortex-m4f-80mhz/);
    refused({ targetDevice: { name: 'cortex-m4f-80mhz', rom: 1024 } }, /targetDevice.ram: the device's RAM in bytes is required/);
    refused({ targetDevice: { name: 'cortex-m4f-80mhz', ram: 0, rom: 1024 } }, /targetDevice.ram: the device's RAM/);
    refused({ targetDevice: { name: 'cortex-m4f-80mhz', ram: 1024 } }, /targetDevice.rom: the device's ROM/);
    refused({ targetDevice: { name: 'cortex-m4f-80mhz', ram: -5, rom: 1024 } }, /targetDevice.ram must be from 1024/);
  });

  it('bounds the latency, the trials, the workers and the training cycles', () => {
    refused({ targetLatency: 0 }, /targetLatency must be from 1 to 60000/);
    refused({ targetLatency: Number.NaN }, /targetLatency must be a number/);
    refused({ tuningMaxTrials: 0 }, /tuningMaxTrials must be from 1 to 1000/);
    refused({ tuningMaxTrials: 1001 }, /tuningMaxTrials must be from 1 to 1000/);
    refused({ tuningMaxTrials: 2.5 }, /tuningMaxTrials must be a whole number/);
    refused({ tuningWorkers: 65 }, /tuningWorkers must be from 1 to 64/);
    refused({ trainingCycles: 0 }, /trainingCycles must be from 1 to 10000/);
  });

  it('runs random search and hyperband only', () => {
    refused({ tuningAlgorithm: 'bayesian' }, /tuningAlgorithm: "bayesian" is not run by this service \(random, hyperband\)/);
    refused({ tuningAlgorithm: 'custom' }, /tuningAlgorithm: "custom"/);
  });

  it('checks a space against the project: none without an impulse', () => {
    refused({ space: [space()] }, /the project has no impulse/, { ...motion, impulse: null });
    // Without a space there is nothing to check: the job derives one from the impulse.
    spec.given([]).when(set({}, { ...motion, impulse: null })).thenMatches((events) => expect(events).toHaveLength(1));
  });

  it('refuses a space with an empty list: it yields no impulse', () => {
    refused({ space: [space({ inputBlocks: [] })] }, /space\[0\].inputBlocks is empty: the space yields no impulse/);
    refused({ space: [space({ inputBlocks: [{ type: 'time-series', window: [] }] })] }, /space\[0\].inputBlocks\[0\].window is empty/);
    refused({ space: [space({ dspBlocks: [{ type: 'spectral-analysis', 'fft-length': [] }] })] }, /space\[0\].dspBlocks\[0\]\["fft-length"\] is empty/);
    refused({ space: [space({ learnBlocks: [] })] }, /space\[0\].learnBlocks is empty/);
    refused({ space: [space({ learnBlocks: [[{ type: 'keras', dimension: [] }]] })] }, /space\[0\].learnBlocks\[0\]\[0\].dimension is empty/);
  });

  it('refuses a space too large to check on saving (every value against every window), naming the count', () => {
    const windows = Array.from({ length: 32 }, (_, i) => ({ windowSizeMs: 1000 + i, windowIncreaseMs: 100 }));
    const values = Array.from({ length: 32 }, (_, i) => String(2 ** (i % 12 + 1)));
    const dsp = { type: 'spectral-analysis', 'fft-length': values, 'filter-cutoff': values, 'filter-order': ['0', '2', '4', '6', '8'] };
    refused({ space: [space({ inputBlocks: [{ type: 'time-series', window: windows }], dspBlocks: Array.from({ length: 8 }, () => dsp) })] }, /space\[0\]: checking it takes 17920 DSP checks \(32 windows by 560 values and defaults\); at most 2000/);
    refused({ space: [space({ inputBlocks: Array.from({ length: 2 }, () => ({ type: 'time-series', window: windows })) })] }, /space\[0\].inputBlocks: 64 windows in all; at most 32/);
    // The bound is on the whole space: impulses of 32 windows by 20 values each (640 checks) go beyond it at the 4th.
    const mid = space({ inputBlocks: [{ type: 'time-series', window: windows }], dspBlocks: [{ type: 'spectral-analysis', 'fft-length': values.slice(0, 19) }] });
    refused({ space: Array.from({ length: 16 }, () => mid) }, /space\[3\]: checking it takes 2560 DSP checks \(with the impulses before it/);
  });

  it('refuses a window the input cannot take', () => {
    refused({ space: [space({ inputBlocks: [{ type: 'time-series', window: [{ windowSizeMs: 1000, windowIncreaseMs: 2000 }] }] })] }, /window\[0\].windowIncreaseMs must be from 1 to 1000, got 2000/);
    refused({ space: [space({ inputBlocks: [{ type: 'image', window: [{ windowSizeMs: 1000, windowIncreaseMs: 100 }] }] })] }, /searches time-series inputs/);
    refused({ space: [space()] }, /the project's impulse reads "image" data/, { ...motion, impulse: { inputType: 'image', learnTypes: ['keras'] } });
  });

  it('refuses a DSP choice its block does not accept, for the value and the window that fail', () => {
    refused({ space: [space({ dspBlocks: [{ type: 'fourier' }] })] }, /dspBlocks\[0\].type: "fourier" is not a DSP block/);
    refused({ space: [space({ dspBlocks: [{ type: 'image' }] })] }, /the image block does not read time series/);
    refused({ space: [space({ dspBlocks: [{ type: 'spectral-analysis', 'fft-length': [16, 100] }] })] }, /dspBlocks\[0\]\["fft-length"\]\[1\]: "fft_length"|dspBlocks\[0\]\["fft-length"\]\[1\]:.*power of 2/);
    refused({ space: [space({ dspBlocks: [{ type: 'spectral-analysis', 'no-such-parameter': [1] }] })] }, /unknown parameter of the spectral-analysis block/);
    refused({ space: [space({ dspBlocks: [{ type: 'spectral-analysis', 'fft-length': [{ a: 1 }] }] })] }, /\["fft-length"\]\[0\] must be a string, a number or a boolean/);
  });

  it('refuses a model the project cannot train', () => {
    refused({ space: [space({ learnBlocks: [[{ type: 'anomaly' }]] })] }, /trains keras and keras-regression blocks, got "anomaly"/);
    refused({ space: [space({ learnBlocks: [[{ type: 'keras-regression' }]] })] }, /the project's impulse has no keras-regression learn block \(it has keras, anomaly\)/);
    refused({ space: [space({ learnBlocks: [[{ type: 'keras' }, { type: 'keras' }]] })] }, /one learn block per impulse, got 2/);
    refused({ space: [space({ learnBlocks: [[{ type: 'keras', dimension: [[0]] }]] })] }, /dimension\[0\]\[0\] must be from 1 to 4096/);
    refused({ space: [space({ learnBlocks: [[{ type: 'keras', learningRate: [0] }]] })] }, /learningRate\[0\] must be from/);
    refused({ trainingCycles: 20, space: [space({ learnBlocks: [[{ type: 'keras', trainingCycles: [30] }]] })] }, /trainingCycles\[0\] must be from 1 to 20, got 30/);
    refused({ space: [space({ learnBlocks: [[{ type: 'keras', epochs: [3] }]] })] }, /unknown field "epochs"/);
  });
});

describe('a project with a tuner config', () => {
  it('appends nothing for a save that changes nothing, and the new config for one that does', () => {
    const first = { ...DEFAULT_OPTIMIZE_SETTINGS, targetDevice: device };
    spec.given([configSet(first)]).when(set({})).then([]);
    spec.given([configSet(first)]).when(set({ tuningMaxTrials: 4 })).then([configSet({ ...first, tuningMaxTrials: 4 })]);
  });
});

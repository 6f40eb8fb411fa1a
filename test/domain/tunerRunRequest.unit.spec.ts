import { describe, expect, it } from 'vitest';
import { DEFAULT_KERAS_SETTINGS } from '../../domain/learn/kerasSettings';
import { DEFAULT_OPTIMIZE_SETTINGS } from '../../domain/optimize/optimizeConfig';
import { randomTrials, trialKey } from '../../domain/optimize/searchSpace';
import { checkTunerRunRequest, type TunerRunRequestFacts } from '../../domain/optimize/tunerRunRequest';
import type { TunerSpaceImpulse } from '../../domain/optimize/tunerSpace';
import { ValidationError } from '../../domain/shared/errors';

const space: TunerSpaceImpulse[] = [
  {
    inputBlocks: [{ type: 'time-series', windows: [{ windowSizeMs: 500, windowIncreaseMs: 250 }] }],
    dspBlocks: [{ type: 'spectral-analysis', parameters: [{ name: 'fft-length', values: ['16', '32'] }] }],
    learnBlocks: [{ blocks: [{ type: 'keras', denseStacks: [{ neurons: [20] }], learningRates: [0.005], trainingCycles: [5], batchSizes: [32] }] }],
  },
];
const impulse: NonNullable<TunerRunRequestFacts['impulse']> = {
  inputType: 'time-series',
  frequencyHz: 100,
  learnTypes: ['keras', 'anomaly'],
  forSpace: { input: { windowSizeMs: 500, windowIncreaseMs: 250, frequencyHz: 100 }, dsp: { type: 'spectral-analysis', config: null }, learn: { type: 'keras', settings: DEFAULT_KERAS_SETTINGS } },
};
const facts = (over: Partial<TunerRunRequestFacts> = {}): TunerRunRequestFacts => ({ config: { ...DEFAULT_OPTIMIZE_SETTINGS, space }, trainingLabels: ['idle', 'wave'], impulse, ...over });

function refusal(f: TunerRunRequestFacts): { code: string; message: string } {
  try {
    checkTunerRunRequest(f);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return { code: (error as ValidationError).code, message: (error as Error).message };
  }
  throw new Error('the request should have been refused');
}

describe('a tuner run request', () => {
  it('searches the config\'s space, or the space around the impulse when the config has none', () => {
    expect(checkTunerRunRequest(facts())).toEqual({ space, frequencyHz: 100, learnTypes: ['keras', 'anomaly'] });
    const around = checkTunerRunRequest(facts({ config: DEFAULT_OPTIMIZE_SETTINGS }));
    expect(around.space).toHaveLength(1);
    expect(around.space[0]!.inputBlocks[0]!.windows[0]).toEqual({ windowSizeMs: 500, windowIncreaseMs: 250 });
  });

  it('is refused for a device without RAM, naming it', () => {
    const config = { ...DEFAULT_OPTIMIZE_SETTINGS, space, targetDevice: { ...DEFAULT_OPTIMIZE_SETTINGS.targetDevice, ram: 0 } };
    expect(refusal(facts({ config }))).toMatchObject({ code: 'DEVICE_MEMORY_REQUIRED', message: expect.stringMatching(/no RAM/) });
  });

  it('is refused for a project with training data of fewer than 2 classes', () => {
    expect(refusal(facts({ trainingLabels: ['idle'] }))).toMatchObject({ code: 'NO_TRAINING_DATA', message: expect.stringMatching(/1 class: .*at least 2/) });
    expect(refusal(facts({ trainingLabels: [] })).code).toBe('NO_TRAINING_DATA');
  });

  it('is refused when no trial of the space can run on the impulse as it is now', () => {
    // The space was saved for a keras block; the impulse now has a regression block.
    expect(refusal(facts({ impulse: { ...impulse, learnTypes: ['keras-regression'] } }))).toMatchObject({ code: 'NO_VALID_TRIAL', message: expect.stringMatching(/no valid trial/) });
    expect(refusal(facts({ impulse: null })).code).toBe('NO_IMPULSE');
  });

  it('extending: refused for a run that is not the project\'s, or still running, or whose space is spent', () => {
    expect(refusal(facts({ extended: { jobId: 9, lineage: null } }))).toMatchObject({ code: 'EXTENDED_RUN_NOT_FOUND', message: expect.stringMatching(/9 is not a tuner run of this project/) });
    expect(refusal(facts({ extended: { jobId: 9, lineage: { seed: 9, space, tried: new Set(), ended: false } } })).code).toBe('EXTENDED_RUN_RUNNING');
    const all = new Set(randomTrials(space, 10, 9, 100).map(trialKey));
    expect(refusal(facts({ extended: { jobId: 9, lineage: { seed: 9, space, tried: all, ended: true } } }))).toMatchObject({ code: 'NO_VALID_TRIAL', message: expect.stringMatching(/tried already/) });
    expect(checkTunerRunRequest(facts({ config: DEFAULT_OPTIMIZE_SETTINGS, extended: { jobId: 9, lineage: { seed: 9, space, tried: new Set(), ended: true } } })).space).toBe(space);
  });
});

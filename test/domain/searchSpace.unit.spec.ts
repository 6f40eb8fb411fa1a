import { describe, expect, it } from 'vitest';
import { hyperbandBrackets, hyperbandSurvivors, randomTrials, spaceSize, trialKey, trialProblem } from '../../domain/optimize/searchSpace';
import type { TunerSpaceImpulse } from '../../domain/optimize/tunerSpace';

const keras = (over: Partial<TunerSpaceImpulse['learnBlocks'][number]['blocks'][number]> = {}) => ({
  blocks: [{ type: 'keras' as const, denseStacks: [{ neurons: [20, 10] }, { neurons: [40] }], learningRates: [0.005, 0.0005], trainingCycles: [10], batchSizes: [32], ...over }],
});
/** 2 windows x (2 fft lengths x 2 logs) x (2 stacks x 2 rates) = 32 combinations. */
const small: TunerSpaceImpulse = {
  inputBlocks: [{ type: 'time-series', windows: [{ windowSizeMs: 1000, windowIncreaseMs: 250 }, { windowSizeMs: 2000, windowIncreaseMs: 500 }] }],
  dspBlocks: [{ type: 'spectral-analysis', parameters: [{ name: 'fft-length', values: ['16', '64'] }, { name: 'do-log', values: ['true', 'false'] }] }],
  learnBlocks: [keras()],
};

describe('random search over a space', () => {
  it('counts the combinations of every list', () => {
    expect(spaceSize([small])).toBe(32);
    expect(spaceSize([small, small])).toBe(64);
    expect(spaceSize([])).toBe(0);
  });

  it('gives the same trials for the same seed, and others for another seed', () => {
    const a = randomTrials([small], 8, 42, 100);
    expect(randomTrials([small], 8, 42, 100)).toEqual(a);
    expect(randomTrials([small], 8, 43, 100).map(trialKey)).not.toEqual(a.map(trialKey));
  });

  it('extends the same list when more trials are asked for (an extended run keeps its trials)', () => {
    expect(randomTrials([small], 12, 7, 100).slice(0, 5)).toEqual(randomTrials([small], 5, 7, 100));
  });

  it('gives distinct trials, each a choice of every list, all of the space when asked for more', () => {
    const all = randomTrials([small], 100, 1, 100);
    expect(all).toHaveLength(32);
    expect(new Set(all.map(trialKey)).size).toBe(32);
    for (const t of all) {
      expect([1000, 2000]).toContain(t.window.windowSizeMs);
      expect(['16', '64']).toContain(t.dsp.config['fft-length']);
      expect(['true', 'false']).toContain(t.dsp.config['do-log']);
      expect([[20, 10], [40]]).toContainEqual(t.learn.denseLayers);
      expect(t.learn).toMatchObject({ type: 'keras', trainingCycles: 10, batchSize: 32 });
    }
  });

  it('skips the combinations a block refuses, so every trial can run', () => {
    // Each choice is valid alone (an odd order without a filter; a low-pass at the default order 6),
    // a low-pass of order 3 is not: 2 windows x 4 models of it are skipped.
    const space: TunerSpaceImpulse = { ...small, dspBlocks: [{ type: 'spectral-analysis', parameters: [{ name: 'filter-type', values: ['none', 'low'] }, { name: 'filter-order', values: ['3', '4'] }] }] };
    expect(spaceSize([space])).toBe(32);
    const trials = randomTrials([space], 100, 3, 100);
    expect(trials).toHaveLength(24);
    expect(trials.filter((t) => t.dsp.config['filter-type'] === 'low' && t.dsp.config['filter-order'] === '3')).toEqual([]);
    expect(trials.every((t) => trialProblem(t, 100) === undefined)).toBe(true);
  });

  it('draws from a space too large to list, still seeded and distinct', () => {
    const values = Array.from({ length: 32 }, (_, i) => String(i + 1));
    const large: TunerSpaceImpulse = {
      ...small,
      learnBlocks: [keras({ learningRates: values.map((v) => Number(v) / 1000) })],
      dspBlocks: [{ type: 'spectral-analysis', parameters: [{ name: 'filter-cutoff', values }, { name: 'filter-order', values: ['0', '2', '4', '6', '8'] }, { name: 'do-log', values: ['true', 'false'] }] }],
    };
    expect(spaceSize([large])).toBeGreaterThan(20_000);
    const trials = randomTrials([large], 20, 9, 100);
    expect(trials).toHaveLength(20);
    expect(new Set(trials.map(trialKey)).size).toBe(20);
    expect(randomTrials([large], 20, 9, 100)).toEqual(trials);
  });
});

describe('hyperband brackets', () => {
  it('follows Li et al. for 27 cycles and eta 3: 27 trials on 1 cycle down to 3 on 27', () => {
    expect(hyperbandBrackets(27, 27 + 12 + 6 + 4)).toEqual([
      [{ trials: 27, cycles: 1 }, { trials: 9, cycles: 3 }, { trials: 3, cycles: 9 }, { trials: 1, cycles: 27 }],
      [{ trials: 12, cycles: 3 }, { trials: 4, cycles: 9 }, { trials: 1, cycles: 27 }],
      [{ trials: 6, cycles: 9 }, { trials: 2, cycles: 27 }],
      [{ trials: 4, cycles: 27 }],
    ]);
  });

  it('spends exactly the trials allowed, cutting the last bracket or starting the brackets again, never a cycle above the maximum', () => {
    const brackets = hyperbandBrackets(30, 20);
    expect(brackets.reduce((n, b) => n + b[0]!.trials, 0)).toBe(20);
    for (const b of brackets) for (const r of b) expect(r.cycles).toBeLessThanOrEqual(30);
    expect(hyperbandBrackets(27, 60).map((b) => b[0]!.trials)).toEqual([27, 12, 6, 4, 11]);
    // One cycle at most: one round per bracket, random search on one cycle.
    expect(hyperbandBrackets(1, 3)).toEqual([[{ trials: 1, cycles: 1 }], [{ trials: 1, cycles: 1 }], [{ trials: 1, cycles: 1 }]]);
  });
});

describe('hyperband survivors', () => {
  it('keeps the best within the device budget first, then by accuracy, ties by index, never a failed trial', () => {
    const results = [
      { index: 0, accuracy: 0.7, overBudget: false },
      { index: 1, accuracy: 0.99, overBudget: true },
      { index: 2, accuracy: null, overBudget: false },
      { index: 3, accuracy: 0.9, overBudget: false },
      { index: 4, accuracy: 0.7, overBudget: false },
    ];
    expect(hyperbandSurvivors(results, 3)).toEqual([3, 0, 4]);
    expect(hyperbandSurvivors(results, 5)).toEqual([3, 0, 4, 1]);
    expect(hyperbandSurvivors([...results].reverse(), 2)).toEqual([3, 0]);
    expect(hyperbandSurvivors(results, 0)).toEqual([]);
  });
});

import type { TunerTrial } from 'edge-impulse-api';
import { describe, expect, it } from 'vitest';
import { parseTunerTrialKey, tunerStateView, tunerTrialKey, tunerTrialView } from '../../api/views/tunerStateView';
import { DEFAULT_OPTIMIZE_SETTINGS } from '../../domain/optimize/optimizeConfig';
import { storedTrialImpulse, type TunerRunDocument, type TunerTrialDocument } from '../../projections/tunerRuns/tunerRunDocument';
import type { Wire } from '../support/sdkWire';

// A trial's per-epoch progress comes from the `epochs` the trial runner records on its document
// (docs/tuner.md, A trial): the view answers the last epoch, and a document without them (an older runner,
// or training not begun) answers no progress.
describe('a tuner trial in the SDK shape', () => {
  const run: TunerRunDocument = {
    _id: '1:50', projectId: 1, coordinatorJobId: 50, index: 1, name: 'Run 1', config: DEFAULT_OPTIMIZE_SETTINGS, space: [], seed: 50, extendedFromJobId: null, created: '2026-11-27T10:00:00.000Z', jobStatus: 'running', error: null, _position: '',
  };
  const trial = (fields: Partial<TunerTrialDocument>): TunerTrialDocument => ({
    _id: '1:50:2', projectId: 1, coordinatorJobId: 50, trial: 2, status: 'running', jobId: 57, attempt: 1, accuracy: null, loss: null, estimates: null, overBudget: false, error: null, epochs: [], modelSha256: null, _position: '',
    impulse: storedTrialImpulse({ window: { windowSizeMs: 2000, windowIncreaseMs: 500 }, dsp: { type: 'mfe', config: { frame_stride: '0.02' } }, learn: { type: 'keras-regression', denseLayers: [16], learningRate: 0.001, trainingCycles: 30, batchSize: 16 } }),
    round: { bracket: 0, round: 1, cycles: 9 },
    ...fields,
  });

  it('answers the last recorded epoch as the progress, with training under way', () => {
    const epochs = [
      { epoch: 1, loss: 0.9, accuracy: 0.5, valLoss: 1, valAccuracy: 0.4 },
      { epoch: 2, loss: 0.5, accuracy: 0.75, valLoss: 0.625, valAccuracy: 0.7 },
    ];
    const expected: Wire<TunerTrial> = {
      id: '50-2',
      name: 'Trial 3: mfe, 2000 ms window, dense 16',
      status: 'running',
      retries: 0,
      blocks: [
        { id: 1, type: 'input', status: 'completed', retries: 0 },
        { id: 2, type: 'dsp', status: 'completed', retries: 0 },
        { id: 3, type: 'learn', status: 'running', retries: 0 },
      ],
      // A hyperband trial trains for its round's cycles, not the space's.
      impulse: { inputBlocks: [{ type: 'time-series', windowSizeMs: 2000, windowIncreaseMs: 500 }], dspBlocks: [{ type: 'mfe', frame_stride: '0.02' }], learnBlocks: [{ type: 'keras-regression', dimension: [16], learningRate: 0.001, trainingCycles: 9, batchSize: 16 }] },
      learnJobId: 57,
      optimizationRound: 1,
      currentEpoch: 2,
      progress: { epoch: 2, loss: 0.5, val_loss: 0.625, accuracy: 0.75, val_accuracy: 0.7 },
    };
    expect(tunerTrialView(trial({ epochs }), run, 'http://studio.test')).toEqual(expected);
  });

  it('answers no progress without epochs, and the epoch alone when its figures are incomplete', () => {
    const none = tunerTrialView(trial({}), run, 'http://studio.test');
    expect(none).not.toHaveProperty('progress');
    expect(none).not.toHaveProperty('currentEpoch');
    expect(none.blocks.map((b) => b.status)).toEqual(['completed', 'running', 'pending']);
    expect(tunerTrialView(trial({ epochs: 'not a list' as unknown as TunerTrialDocument['epochs'] }), run, 'http://studio.test')).not.toHaveProperty('progress');
    const regression = tunerTrialView(trial({ epochs: [{ epoch: 1, loss: 0.3, accuracy: null, valLoss: 0.4, valAccuracy: null }] }), run, 'http://studio.test');
    expect(regression.currentEpoch).toBe(1);
    expect(regression).not.toHaveProperty('progress');
  });

  it('marks the learn block failed when a trial failed after training began', () => {
    const failed = tunerTrialView(trial({ status: 'failed', attempt: 2, epochs: [{ epoch: 1, loss: 1, accuracy: 0.5, valLoss: 1, valAccuracy: 0.5 }] }), run, 'http://studio.test');
    expect(failed.blocks).toEqual([
      { id: 1, type: 'input', status: 'completed', retries: 1 },
      { id: 2, type: 'dsp', status: 'completed', retries: 1 },
      { id: 3, type: 'learn', status: 'failed', retries: 1 },
    ]);
  });

  it('answers the DSP block type whatever parameter names the config holds', () => {
    const stored = { ...trial({}).impulse!, dsp: { type: 'mfe', config: [{ name: 'type', value: 'raw' }, { name: 'frame_stride', value: '0.02' }] } };
    expect(tunerTrialView(trial({ impulse: stored }), run, 'http://studio.test').impulse.dspBlocks?.[0]).toEqual({ type: 'mfe', frame_stride: '0.02' });
  });

  it("tells a cancelled run from a completed one by its jobError (the state has no jobStatus), and answers a failed run's error", () => {
    const state = (doc: Partial<TunerRunDocument>) => tunerStateView({ run: { doc: { ...run, ...doc }, trials: [] }, runs: [run], savedConfig: null, impulseDspTypes: [], isWhitelabel: false, publicUrl: 'http://studio.test' });
    expect(state({ jobStatus: 'cancelled' })).toMatchObject({ jobError: 'Cancelled', tunerJobIsRunning: false, status: { status: 'completed' } });
    expect(state({ jobStatus: 'failed', error: 'The space yields no valid impulse' })).toMatchObject({ jobError: 'The space yields no valid impulse' });
    expect(state({ jobStatus: 'completed' })).not.toHaveProperty('jobError');
    expect(state({})).toMatchObject({ tunerJobIsRunning: true, status: { status: 'creating' } });
  });

  it('reads back only the trial ids it hands out', () => {
    expect(parseTunerTrialKey(tunerTrialKey(50, 2))).toEqual({ coordinatorJobId: 50, trial: 2 });
    for (const bad of ['', '50', '50-', '-2', '0-1', '50-2-1', '50-1e3', ' 50-2', '50-2 ', '9'.repeat(16) + '-1', '50-1234567', '50_2', '５０-2']) {
      expect(parseTunerTrialKey(bad), bad).toBeUndefined();
    }
  });
});

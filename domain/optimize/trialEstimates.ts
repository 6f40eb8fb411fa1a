// A trial's figures for the run's target device: the model's from kerasPerformance (TensorFlow Lite
// runtime: its arena and runtime RAM, its weights and runtime code as ROM, its multiply-accumulates
// over the device's rate as latency), plus what the service knows of the DSP block on the device: it
// holds one window of raw values and its features as float32 while it runs. The service has no
// per-block DSP latency or code size figures, so the DSP adds RAM only.
import type { KerasMode } from '../learn/kerasRegression';
import { kerasPerformance } from '../learn/kerasPerformance';
import type { KerasSettings } from '../learn/kerasSettings';
import type { TrialEstimates } from './tunerRunEvents';

export interface TrialModel {
  settings: KerasSettings;
  featureCount: number;
  classes: string[];
  mode: KerasMode;
}

/** `windowValues`: raw values in one window (rows × axes). */
export function trialEstimates(model: TrialModel, windowValues: number, device: string): TrialEstimates {
  const [performance] = kerasPerformance({ settings: model.settings, inputShape: [model.featureCount], classes: model.classes, ...(model.mode === 'regression' ? { mode: model.mode } : {}) }, device);
  const dspRamBytes = (windowValues + model.featureCount) * 4;
  return {
    latencyMs: performance!.latency,
    ramBytes: performance!.tflite.ramRequired + dspRamBytes,
    romBytes: performance!.tflite.romRequired,
  };
}

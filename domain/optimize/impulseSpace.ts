// The space a run searches when the config has none: around the project's impulse. Its window, half
// and double; its DSP block with its saved config and a few values of the parameter that matters most
// for the block; its keras model, half and double as wide, at its learning rate and a fifth and five
// times it. A window the saved DSP config is refused for is left out, then a value the block refuses
// for some window left (each choice stays valid alone, as in a saved space): the current impulse is
// one of the combinations.
import { dspBlockDefinition } from '../impulse/blockCatalog';
import { validateDspConfig } from '../impulse/dspConfig';
import { MAX_WINDOW_MS } from '../impulse/impulseValidation';
import { DEFAULT_KERAS_SETTINGS, LAYER_LIMITS, type KerasSettings } from '../learn/kerasSettings';
import type { TunerDspChoice, TunerKerasChoice, TunerSpaceImpulse, TunerWindow } from './tunerSpace';

export interface ImpulseForSpace {
  input: { windowSizeMs: number; windowIncreaseMs: number; frequencyHz?: number };
  dsp: { type: string; config: Record<string, string> | null };
  learn: { type: TunerKerasChoice['type']; settings: KerasSettings };
}

/** The parameter each block's search varies most usefully, with the values tried besides the saved one. */
const VARIED: Record<string, { name: string; values: string[] } | undefined> = {
  'spectral-analysis': { name: 'fft-length', values: ['16', '32', '64', '128'] },
  mfe: { name: 'frame_stride', values: ['0.01', '0.02', '0.04'] },
  mfcc: { name: 'num_cepstral', values: ['10', '13', '20'] },
  spectrogram: { name: 'frame_stride', values: ['0.01', '0.02', '0.04'] },
};

const unique = <T>(values: readonly T[]): T[] => [...new Map(values.map((v) => [JSON.stringify(v), v])).values()];

function windowsAround(input: ImpulseForSpace['input']): TunerWindow[] {
  return unique(
    [1, 0.5, 2].map((f) => {
      const windowSizeMs = Math.max(1, Math.min(MAX_WINDOW_MS, Math.round(input.windowSizeMs * f)));
      return { windowSizeMs, windowIncreaseMs: Math.max(1, Math.min(windowSizeMs, Math.round(input.windowIncreaseMs * f))) };
    }),
  );
}

function dspAround(dsp: ImpulseForSpace['dsp'], windows: readonly TunerWindow[], frequencyHz: number | undefined): TunerDspChoice {
  const def = dspBlockDefinition(dsp.type);
  const saved = dsp.config ?? {};
  const varied = VARIED[dsp.type];
  const lists = new Map(Object.entries(saved).map(([name, value]) => [name, [value]]));
  if (varied) lists.set(varied.name, unique([...(lists.get(varied.name) ?? []), ...varied.values]));
  const validEverywhere = (name: string, value: string) =>
    def !== undefined && windows.every((w) => validateDspConfig(def, { [name]: value }, { implementationVersion: def.info.latestImplementationVersion, frequencyHz, windowSizeMs: w.windowSizeMs }).length === 0);
  const parameters = [...lists]
    .map(([name, values]) => ({ name, values: values.filter((v) => validEverywhere(name, v)) }))
    .filter((p) => p.values.length > 0);
  return { type: dsp.type, parameters };
}

function kerasAround(learn: ImpulseForSpace['learn'], maxCycles: number): TunerKerasChoice {
  const dense = learn.settings.visualLayers.filter((l) => l.enabled !== false);
  const own = dense.every((l) => l.type === 'dense') && dense.length > 0 ? dense.map((l) => l.neurons!) : DEFAULT_KERAS_SETTINGS.visualLayers.map((l) => l.neurons!);
  const scaled = (f: number) => own.map((n) => Math.max(LAYER_LIMITS.neurons.min, Math.min(LAYER_LIMITS.neurons.max, Math.round(n * f))));
  const rate = learn.settings.learningRate;
  return {
    type: learn.type,
    denseStacks: unique([own, scaled(0.5), scaled(2)]).map((neurons) => ({ neurons })),
    learningRates: unique([rate, rate / 5, Math.min(10, rate * 5)].filter((r) => r >= 1e-7)),
    trainingCycles: [Math.min(maxCycles, learn.settings.trainingCycles)],
    batchSizes: [learn.settings.batchSize],
  };
}

/** The space around `impulse`, for trials of at most `maxCycles` training cycles. */
export function impulseSpace(impulse: ImpulseForSpace, maxCycles: number): TunerSpaceImpulse {
  const def = dspBlockDefinition(impulse.dsp.type);
  const [own, ...others] = windowsAround(impulse.input);
  const savedRuns = (w: TunerWindow) =>
    def !== undefined && validateDspConfig(def, impulse.dsp.config ?? {}, { implementationVersion: def.info.latestImplementationVersion, frequencyHz: impulse.input.frequencyHz, windowSizeMs: w.windowSizeMs }).length === 0;
  const windows = [own!, ...others.filter(savedRuns)];
  return {
    inputBlocks: [{ type: 'time-series', windows }],
    dspBlocks: [dspAround(impulse.dsp, windows, impulse.input.frequencyHz)],
    learnBlocks: [{ blocks: [kerasAround(impulse.learn, maxCycles)] }],
  };
}

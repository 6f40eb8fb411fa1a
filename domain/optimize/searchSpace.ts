// The trials of a run, from its space and its seed: pure, so a run is reproduced from its seed and an
// extended run can skip the trials it already has. Random search draws distinct trials (all of them
// in a seeded order when the space is small, else seeded draws with duplicates skipped); hyperband
// adds the brackets' schedule (how many trials train how many cycles per round). Combinations a
// block refuses (each choice was checked alone when the config was saved) are skipped.
import { dspBlockDefinition } from '../impulse/blockCatalog';
import { validateDspConfig } from '../impulse/dspConfig';
import { seededRandom } from '../shared/seededRandom';
import type { TunerKerasChoice, TunerSpaceImpulse, TunerWindow } from './tunerSpace';

/** One impulse a trial trains: a window, a DSP block with the parameters it varies (the others at their defaults), one model. */
export interface TrialImpulse {
  window: TunerWindow;
  dsp: { type: string; config: Record<string, string> };
  learn: { type: TunerKerasChoice['type']; denseLayers: number[]; learningRate: number; trainingCycles: number; batchSize: number };
}

/** Spaces up to this many combinations are listed whole and shuffled; larger ones are drawn from. */
const LIST_MAX = 20_000;
/** Draws per wanted trial before a large space is taken to hold no more valid distinct trials. */
const DRAWS_PER_TRIAL = 50;

/** Why the trial cannot run on input sampled at `frequencyHz`; undefined when it can. */
export function trialProblem(trial: TrialImpulse, frequencyHz: number | undefined): string | undefined {
  const def = dspBlockDefinition(trial.dsp.type);
  if (!def) return `"${trial.dsp.type}" is not a DSP block of this service`;
  return validateDspConfig(def, trial.dsp.config, { implementationVersion: def.info.latestImplementationVersion, frequencyHz, windowSizeMs: trial.window.windowSizeMs })[0];
}

/** A trial's canonical text: equal for equal trials, whatever order its parameters were listed in. */
export function trialKey(trial: TrialImpulse): string {
  const config = Object.keys(trial.dsp.config).sort().map((k) => [k, trial.dsp.config[k]]);
  return JSON.stringify([trial.window.windowSizeMs, trial.window.windowIncreaseMs, trial.dsp.type, config, trial.learn]);
}

// Each list of one space impulse is a digit of a mixed-radix number: a combination's index decodes
// into one choice per list. Sizes are products of at most a few dozen lists of at most 32 choices,
// so they may exceed 2^53: they are counted as floating point and only listed when small.
interface Radix<T> {
  size: number;
  decode(index: number): T;
}

function learnChoices(block: TunerKerasChoice): Radix<TrialImpulse['learn']> {
  const lists = [block.denseStacks.length, block.learningRates.length, block.trainingCycles.length, block.batchSizes.length];
  return {
    size: lists.reduce((a, b) => a * b, 1),
    decode(index) {
      const [s, r, c, b] = digits(index, lists) as [number, number, number, number];
      return { type: block.type, denseLayers: [...block.denseStacks[s]!.neurons], learningRate: block.learningRates[r]!, trainingCycles: block.trainingCycles[c]!, batchSize: block.batchSizes[b]! };
    },
  };
}

function digits(index: number, radices: readonly number[]): number[] {
  const out: number[] = [];
  let rest = index;
  for (const r of radices) {
    out.push(rest % r);
    rest = Math.floor(rest / r);
  }
  return out;
}

/** Alternatives as one digit: the alternative and its own index within it. */
function alternatives<T>(options: readonly Radix<T>[]): Radix<T> {
  const size = options.reduce((n, o) => n + o.size, 0);
  return {
    size,
    decode(index) {
      let rest = index;
      for (const o of options) {
        if (rest < o.size) return o.decode(rest);
        rest -= o.size;
      }
      throw new RangeError(`combination ${index} is outside a space of ${size}`);
    },
  };
}

function impulseRadix(space: TunerSpaceImpulse): Radix<TrialImpulse> {
  const windows = space.inputBlocks.flatMap((b) => b.windows);
  const dsp = alternatives(
    space.dspBlocks.map((block) => {
      const radices = block.parameters.map((p) => p.values.length);
      return {
        size: radices.reduce((a, b) => a * b, 1),
        decode: (index: number): TrialImpulse['dsp'] => {
          const chosen = digits(index, radices);
          return { type: block.type, config: Object.fromEntries(block.parameters.map((p, i) => [p.name, p.values[chosen[i]!]!])) };
        },
      };
    }),
  );
  const learn = alternatives(space.learnBlocks.map((set) => learnChoices(set.blocks[0]!)));
  return {
    size: windows.length * dsp.size * learn.size,
    decode(index) {
      const w = index % windows.length;
      const rest = Math.floor(index / windows.length);
      return { window: { ...windows[w]! }, dsp: dsp.decode(rest % dsp.size), learn: learn.decode(Math.floor(rest / dsp.size)) };
    },
  };
}

/** How many combinations the space holds (a float: it may be beyond 2^53). */
export function spaceSize(space: readonly TunerSpaceImpulse[]): number {
  return alternatives(space.map(impulseRadix)).size;
}

/**
 * Up to `count` distinct trials that can run, in the order the seed gives; fewer when the space holds
 * fewer. The same space, seed and count give the same trials, and a larger count extends the list.
 */
export function randomTrials(space: readonly TunerSpaceImpulse[], count: number, seed: number, frequencyHz: number | undefined): TrialImpulse[] {
  const all = alternatives(space.map(impulseRadix));
  const random = seededRandom(seed);
  const valid = (t: TrialImpulse) => trialProblem(t, frequencyHz) === undefined;
  if (all.size <= LIST_MAX) {
    // Fisher-Yates over every index: each trial once, in a seeded order.
    const order = Array.from({ length: all.size }, (_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    const out: TrialImpulse[] = [];
    for (const index of order) {
      if (out.length >= count) break;
      const trial = all.decode(index);
      if (valid(trial)) out.push(trial);
    }
    return out;
  }
  const seen = new Set<string>();
  const out: TrialImpulse[] = [];
  for (let draws = 0; out.length < count && draws < count * DRAWS_PER_TRIAL; draws++) {
    const trial = all.decode(Math.floor(random() * all.size));
    const key = trialKey(trial);
    if (seen.has(key)) continue;
    seen.add(key);
    if (valid(trial)) out.push(trial);
  }
  return out;
}

/** One round of a hyperband bracket: how many trials, each trained for how many cycles. */
export interface HyperbandRound {
  trials: number;
  cycles: number;
}

/**
 * Hyperband's brackets (Li et al., 2018) for trials of at most `maxCycles` cycles, each bracket
 * starting with many trials on few cycles and keeping the best 1/eta for the next round, with
 * `maxTrials` distinct trials in all: brackets from the most exploratory on, the last one cut to the
 * trials left; when every bracket is taken and trials are left, the brackets start again (Hyperband's
 * outer loop, as the paper repeats it). Cycles are whole and at least 1.
 */
export function hyperbandBrackets(maxCycles: number, maxTrials: number, eta = 3): HyperbandRound[][] {
  const sMax = Math.floor(Math.log(maxCycles) / Math.log(eta) + 1e-9);
  const brackets: HyperbandRound[][] = [];
  let left = maxTrials;
  for (let s = sMax; left > 0; s = s === 0 ? sMax : s - 1) {
    const n = Math.min(left, Math.ceil(((sMax + 1) / (s + 1)) * eta ** s));
    left -= n;
    const rounds: HyperbandRound[] = [];
    for (let i = 0; i <= s; i++) {
      const trials = Math.floor(n * eta ** -i);
      if (trials < 1) break;
      rounds.push({ trials, cycles: Math.max(1, Math.min(maxCycles, Math.round(maxCycles * eta ** (i - s)))) });
    }
    brackets.push(rounds);
  }
  return brackets;
}

/** A finished trial of a hyperband round, as the coordinator ranks it. */
export interface RoundResult {
  /** The trial's index in the run (its order in randomTrials). */
  index: number;
  /** Validation accuracy; null when the trial failed or its model diverged. */
  accuracy: number | null;
  /** Over the target device's RAM, ROM or latency. */
  overBudget: boolean;
}

/**
 * The trials that go on to the next round: the best `keep`, those within the device's budget before
 * those over it, then by accuracy (failed last), ties by index so the choice is the same on a replay.
 */
export function hyperbandSurvivors(results: readonly RoundResult[], keep: number): number[] {
  return [...results]
    .filter((r) => r.accuracy !== null)
    .sort((a, b) => Number(a.overBudget) - Number(b.overBudget) || b.accuracy! - a.accuracy! || a.index - b.index)
    .slice(0, Math.max(0, keep))
    .map((r) => r.index);
}

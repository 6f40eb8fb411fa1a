import type { TunerSpaceImpulse } from '../../domain/optimize/tunerSpace';

/**
 * The stored space in the SDK's TunerSpaceImpulse shape, as a client sent it: windows under
 * `window`, one list of values per DSP parameter, dense stacks as `dimension`. DSP values go back as
 * the strings the DSP configs hold.
 */
export function tunerSpaceView(space: readonly TunerSpaceImpulse[]) {
  return space.map((impulse) => ({
    inputBlocks: impulse.inputBlocks.map((b) => ({ type: b.type, window: b.windows.map((w) => ({ ...w })) })),
    dspBlocks: impulse.dspBlocks.map((b) => ({ type: b.type, ...Object.fromEntries(b.parameters.map((p) => [p.name, [...p.values]])) })),
    learnBlocks: impulse.learnBlocks.map((set) =>
      set.blocks.map((b) => ({ type: b.type, dimension: b.denseStacks.map((s) => [...s.neurons]), learningRate: b.learningRates, trainingCycles: b.trainingCycles, batchSize: b.batchSizes })),
    ),
  }));
}

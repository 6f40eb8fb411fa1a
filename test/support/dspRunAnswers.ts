import { DspRunCheckNeeded, dspRunRefusals, type DspRunAnswer } from '../../domain/impulse/dspConfig';
import type { ImpulseCommand, ImpulsesState } from '../../domain/impulse/impulseDecider';
import { impulseDecider } from '../../domain/impulse/impulseDecider';
import type { Decider } from '../../domain/shared/decider';
import type { ImpulseEvent } from '../../domain/impulse/impulseEvents';

/**
 * The impulse decider with the checks by running answered here, on this thread, as
 * commands/impulses/impulseCommands.ts setDspConfig answers them from the DSP pool.
 */
export const impulseDeciderAnswering: Decider<ImpulseCommand, ImpulseEvent, ImpulsesState> = {
  ...impulseDecider,
  decide(command, state) {
    if (command.type !== 'SetDspConfig') return impulseDecider.decide(command, state);
    const runAnswers: DspRunAnswer[] = [...(command.data.runAnswers ?? [])];
    for (;;) {
      try {
        return impulseDecider.decide({ ...command, data: { ...command.data, runAnswers } }, state);
      } catch (error) {
        if (!(error instanceof DspRunCheckNeeded)) throw error;
        runAnswers.push({ check: error.check, refusals: dspRunRefusals(error.check) });
      }
    }
  },
};

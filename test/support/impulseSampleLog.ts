import type { ImpulseBlocksRequest } from '../../domain/impulse/impulseValidation';
import { impulseDecider, type ImpulseCommand } from '../../domain/impulse/impulseDecider';
import { impulseDeciderAnswering } from './dspRunAnswers';
import type { ImpulseEvent } from '../../domain/impulse/impulseEvents';

/** An accelerometer impulse: time series, one DSP block of `dspType`, a classifier. */
export const motionImpulse = (dspType = 'spectral-analysis', ids = { input: 1, dsp: 2, learn: 3 }): ImpulseBlocksRequest => ({
  inputBlocks: [{ id: ids.input, type: 'time-series', axes: ['accX', 'accY', 'accZ'], windowSizeMs: 2000, windowIncreaseMs: 80, frequencyHz: 62.5 }],
  dspBlocks: [{ id: ids.dsp, type: dspType, axes: ['accX', 'accY', 'accZ'], input: ids.input }],
  learnBlocks: [{ id: ids.learn, type: 'keras', dsp: [ids.dsp] }],
  postProcessingBlocks: [],
});

/**
 * The events of a project's impulses stream holding every impulse event type: an impulse created,
 * configured, its DSP block replaced by another type (dropping the config), configured and cleared;
 * a second impulse created empty, renamed and deleted; a block id issued.
 */
export function impulseSampleEvents(projectId: number, now: Date): ImpulseEvent[] {
  const commands: ImpulseCommand[] = [
    { type: 'SaveImpulse', data: { projectId, impulseId: null, newImpulseId: 60, blocks: motionImpulse(), maxImpulses: 3, now } },
    { type: 'SetDspConfig', data: { projectId, dspId: 2, changes: { 'fft-length': '32' }, now } },
    { type: 'CreateEmptyImpulse', data: { projectId, impulseId: 61, impulseType: 'default', maxImpulses: 3, now } },
    { type: 'UpdateImpulse', data: { projectId, impulseId: 61, name: 'Second try', tags: ['draft'], now } },
    { type: 'SaveImpulse', data: { projectId, impulseId: 60, newImpulseId: 62, blocks: motionImpulse('flatten'), maxImpulses: 3, now } },
    { type: 'SetDspConfig', data: { projectId, dspId: 2, changes: { rms: 'false' }, now } },
    { type: 'ClearDspBlock', data: { projectId, dspId: 2, now } },
    { type: 'SetDspConfig', data: { projectId, dspId: 2, changes: { kurtosis: 'false' }, now } },
    { type: 'DeleteImpulse', data: { projectId, impulseId: 61, now } },
    { type: 'IssueBlockId', data: { projectId, now } },
  ];
  let state = impulseDecider.initialState();
  const events: ImpulseEvent[] = [];
  for (const command of commands) {
    for (const e of impulseDeciderAnswering.decide(command, state)) {
      events.push(e);
      state = impulseDecider.evolve(state, e);
    }
  }
  return events;
}

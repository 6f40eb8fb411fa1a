import { describe, expect, it } from 'vitest';
import { impulseDecider, type ImpulseCommand, type ImpulsesState } from '../../domain/impulse/impulseDecider';
import type { ImpulseEvent } from '../../domain/impulse/impulseEvents';
import type { ImpulseBlocksRequest } from '../../domain/impulse/impulseValidation';
import { fold } from '../../domain/shared/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import { DspRunCheckNeeded, dspRunRefusals, type DspRunAnswer } from '../../domain/impulse/dspConfig';
import { deciderSpecification } from '../support/deciderSpecification';
import { motionImpulse } from '../support/impulseSampleLog';
import { impulseDeciderAnswering } from '../support/dspRunAnswers';

const spec = deciderSpecification(impulseDeciderAnswering);
const now = new Date('2026-11-25T10:00:00.000Z');
const projectId = 5;

const save = (blocks: ImpulseBlocksRequest, options: { impulseId?: number | null; newImpulseId?: number; name?: string; maxImpulses?: number } = {}): ImpulseCommand => ({
  type: 'SaveImpulse',
  data: {
    projectId,
    impulseId: options.impulseId ?? null,
    newImpulseId: options.newImpulseId ?? 100,
    ...(options.name === undefined ? {} : { name: options.name }),
    blocks,
    maxImpulses: options.maxImpulses ?? 3,
    now,
  },
});
const setConfig = (dspId: number, changes: Record<string, string>): ImpulseCommand => ({ type: 'SetDspConfig', data: { projectId, dspId, changes, now } });

/** Runs the commands one after the other, as the stream would record them. */
function history(...commands: ImpulseCommand[]): ImpulseEvent[] {
  const events: ImpulseEvent[] = [];
  for (const c of commands) events.push(...impulseDeciderAnswering.decide(c, fold(impulseDecider, events)));
  return events;
}
const stateAfter = (...commands: ImpulseCommand[]): ImpulsesState => fold(impulseDecider, history(...commands));

describe('a project without impulses', () => {
  it('creates the impulse with its blocks resolved: names and titles from the catalog, latest versions, creation times', () => {
    spec
      .given([])
      .when(save(motionImpulse()))
      .thenMatches(([created]) => {
        expect(created!.type).toBe('ImpulseCreated');
        expect(created!.data).toMatchObject({
          projectId,
          impulseId: 100,
          name: 'Impulse #1',
          type: 'default',
          inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', windowSizeMs: 2000, createdAt: now.toISOString() }],
          dspBlocks: [{ id: 2, type: 'spectral-analysis', input: 1, implementationVersion: 4, title: 'Spectral Analysis', name: 'Spectral features' }],
          learnBlocks: [{ id: 3, type: 'keras', dsp: [2], title: 'Classification' }],
          postProcessingBlocks: [],
        });
      });
  });

  it('takes the only input block as the input of a DSP block that names none', () => {
    const blocks = motionImpulse();
    const { input: _input, ...withoutInput } = blocks.dspBlocks[0]!;
    spec
      .given([])
      .when(save({ ...blocks, dspBlocks: [withoutInput] }))
      .thenMatches(([created]) => expect((created!.data as { dspBlocks: { input: number }[] }).dspBlocks[0]!.input).toBe(1));
  });

  it('creates an empty impulse of the given type', () => {
    spec
      .given([])
      .when({ type: 'CreateEmptyImpulse', data: { projectId, impulseId: 7, impulseType: 'BYOM', maxImpulses: 3, now } })
      .thenMatches(([created]) => expect(created!.data).toMatchObject({ impulseId: 7, type: 'BYOM', name: 'Impulse #1', inputBlocks: [], dspBlocks: [] }));
  });

  it('has no default impulse to update, delete or configure', () => {
    spec.given([]).when({ type: 'DeleteImpulse', data: { projectId, impulseId: null, now } }).thenThrows(NotFoundError, /no impulse yet/);
    spec.given([]).when({ type: 'UpdateImpulse', data: { projectId, impulseId: 9, name: 'x', now } }).thenThrows(NotFoundError, /Impulse 9 not found/);
    spec.given([]).when(setConfig(2, {})).thenThrows(NotFoundError, /DSP block 2 not found/);
  });
});

describe('an impulse that is refused', () => {
  const refused = (blocks: ImpulseBlocksRequest, message: RegExp) => spec.given([]).when(save(blocks)).thenThrows(ValidationError, message);
  const base = motionImpulse();

  it('names an unknown block type', () => {
    refused({ ...base, dspBlocks: [{ ...base.dspBlocks[0]!, type: 'magic' }] }, /DSP block 2 \(magic\): "type" is not a known processing block/);
    refused({ ...base, postProcessingBlocks: [{ id: 9, type: 'nope' }] }, /post-processing block 9 \(nope\): "type"/);
  });

  it('names a DSP input or learn input that is not in the impulse', () => {
    refused({ ...base, dspBlocks: [{ ...base.dspBlocks[0]!, input: 42 }] }, /DSP block 2 \(spectral-analysis\): "input" refers to block 42/);
    refused({ ...base, learnBlocks: [{ id: 3, type: 'keras', dsp: [2, 8] }] }, /learn block 3 \(keras\): "dsp" refers to block 8/);
    refused({ ...base, learnBlocks: [{ id: 3, type: 'keras', dsp: [] }] }, /learn block 3 \(keras\): "dsp" must name at least one/);
  });

  it('names repeated block ids', () => {
    refused({ ...base, learnBlocks: [{ id: 2, type: 'keras', dsp: [2] }] }, /learn block 2 \(keras\): "id" 2 is used by another block of this impulse/);
  });

  it('names empty axes, and more than one axis for an audio block', () => {
    refused({ ...base, dspBlocks: [{ ...base.dspBlocks[0]!, axes: [] }] }, /DSP block 2 \(spectral-analysis\): "axes" must name at least one axis/);
    refused(motionImpulse('mfe'), /DSP block 2 \(mfe\): "axes" must name exactly one axis/);
  });

  it('names a DSP block that cannot process its input type', () => {
    refused(
      { ...base, inputBlocks: [{ id: 1, type: 'image', imageWidth: 96, imageHeight: 96 }] },
      /DSP block 2 \(spectral-analysis\): "input" is a image block; this block processes time-series data/,
    );
  });

  it('names window settings that make no sense', () => {
    const input = base.inputBlocks[0]!;
    refused({ ...base, inputBlocks: [{ ...input, windowSizeMs: 0 }] }, /input block 1 \(time-series\): "windowSizeMs" must be above 0/);
    refused({ ...base, inputBlocks: [{ ...input, windowIncreaseMs: -5 }] }, /"windowIncreaseMs" must be above 0/);
    refused({ ...base, inputBlocks: [{ ...input, windowIncreaseMs: 3000 }] }, /"windowIncreaseMs" must be at most "windowSizeMs" \(2000\)/);
    refused({ ...base, inputBlocks: [{ ...input, frequencyHz: 0 }] }, /"frequencyHz" must be above 0/);
  });

  it('names image sizes outside 1 to 2048', () => {
    const image: ImpulseBlocksRequest = {
      inputBlocks: [{ id: 1, type: 'image', imageWidth: 4096, imageHeight: 96 }],
      dspBlocks: [{ id: 2, type: 'image', axes: ['image'], input: 1 }],
      learnBlocks: [{ id: 3, type: 'keras-transfer-image', dsp: [2] }],
      postProcessingBlocks: [],
    };
    refused(image, /input block 1 \(image\): "imageWidth" must be an integer from 1 to 2048, got 4096/);
    refused({ ...image, inputBlocks: [{ id: 1, type: 'image', imageWidth: 96 }] }, /"imageHeight" must be an integer from 1 to 2048/);
  });

  it('names an implementation version the block does not have', () => {
    refused({ ...base, dspBlocks: [{ ...base.dspBlocks[0]!, implementationVersion: 5 }] }, /"implementationVersion" must be from 1 to 4, got 5/);
  });
});

describe('a project with impulses', () => {
  const first = save(motionImpulse());

  it('keeps block ids unique across its impulses', () => {
    const withSecond = history(first, { type: 'CreateEmptyImpulse', data: { projectId, impulseId: 101, impulseType: 'default', maxImpulses: 3, now } });
    spec
      .given(withSecond)
      .when(save(motionImpulse('raw', { input: 10, dsp: 2, learn: 12 }), { impulseId: 101 }))
      .thenThrows(ValidationError, /DSP block 2 \(raw\): "id" 2 is used by a block of another impulse/);
  });

  it('replaces the default impulse when saved without an id, keeping creation times of unchanged blocks', () => {
    const later = new Date('2026-11-26T10:00:00.000Z');
    const command = save(motionImpulse());
    const replaced = impulseDecider.decide({ ...command, data: { ...command.data, now: later } } as ImpulseCommand, stateAfter(first));
    expect(replaced.map((e) => e.type)).toEqual(['ImpulseBlocksReplaced']);
    expect(replaced[0]!.data).toMatchObject({ impulseId: 100, name: 'Impulse #1', clearedDspIds: [] });
    expect((replaced[0]!.data as { dspBlocks: { createdAt: string }[] }).dspBlocks[0]!.createdAt).toBe(now.toISOString());
  });

  it('drops the saved config of a DSP block whose type changes', () => {
    spec
      .given(history(first, setConfig(2, { 'fft-length': '32' })))
      .when(save(motionImpulse('flatten'), { impulseId: 100 }))
      .thenMatches(([replaced]) => expect(replaced!.data).toMatchObject({ clearedDspIds: [2] }));
  });

  it('refuses an impulse past the plan limit', () => {
    const three = history(
      first,
      { type: 'CreateEmptyImpulse', data: { projectId, impulseId: 101, impulseType: 'default', maxImpulses: 3, now } },
      { type: 'CreateEmptyImpulse', data: { projectId, impulseId: 102, impulseType: 'default', maxImpulses: 3, now } },
    );
    spec.given(three).when({ type: 'CreateEmptyImpulse', data: { projectId, impulseId: 103, impulseType: 'default', maxImpulses: 3, now } }).thenThrows(ValidationError, /most its plan allows \(3\)/);
  });

  it('updates only the fields given, and decides nothing when none is', () => {
    spec
      .given(history(first))
      .when({ type: 'UpdateImpulse', data: { projectId, impulseId: null, tags: [' motion ', 'motion'], now } })
      .then([{ type: 'ImpulseUpdated', data: { projectId, impulseId: 100, tags: ['motion'], updated: now.toISOString() } }]);
    spec.given(history(first)).when({ type: 'UpdateImpulse', data: { projectId, impulseId: 100, now } }).then([]);
    spec.given(history(first)).when({ type: 'UpdateImpulse', data: { projectId, impulseId: 100, name: ' ', now } }).thenThrows(ValidationError, /"name" must not be empty/);
  });

  it('deletes an impulse; the next lowest becomes the default', () => {
    const state = stateAfter(first, { type: 'CreateEmptyImpulse', data: { projectId, impulseId: 101, impulseType: 'default', maxImpulses: 3, now } }, { type: 'DeleteImpulse', data: { projectId, impulseId: null, now } });
    expect([...state.impulses.keys()]).toEqual([101]);
  });

  it('issues block ids above every id used or issued, never the same twice, even after a delete', () => {
    const issue: ImpulseCommand = { type: 'IssueBlockId', data: { projectId, now } };
    const events = history(first, issue, issue, { type: 'DeleteImpulse', data: { projectId, impulseId: 100, now } }, issue);
    expect(events.filter((e) => e.type === 'BlockIdIssued').map((e) => e.data.blockId)).toEqual([4, 5, 6]);
  });
});

describe('a DSP block config', () => {
  const first = save(motionImpulse());

  it('is stored resolved: defaults, then saved values, then the keys sent', () => {
    const events = history(first, setConfig(2, { 'fft-length': '64' }), setConfig(2, { 'filter-type': 'low' }));
    const last = events.at(-1)!;
    expect(last.type).toBe('DspConfigSet');
    expect(last.data).toMatchObject({ impulseId: 100, dspId: 2, config: { 'fft-length': '64', 'filter-type': 'low', 'scale-axes': '1', 'do-log': 'true' } });
  });

  it('is refused with the parameter named', () => {
    const given = history(first);
    spec.given(given).when(setConfig(2, { 'fft-length': '100' })).thenThrows(ValidationError, /block 2 \(spectral-analysis\): "fft-length": must be a power of 2/);
    spec.given(given).when(setConfig(2, { 'fft-length': 'abc' })).thenThrows(ValidationError, /"fft-length": expected an integer, got "abc"/);
    spec.given(given).when(setConfig(2, { 'do-log': 'yes' })).thenThrows(ValidationError, /"do-log": expected "true" or "false"/);
    spec.given(given).when(setConfig(2, { 'filter-type': 'band' })).thenThrows(ValidationError, /"filter-type": expected one of "low", "high", "none"/);
    spec.given(given).when(setConfig(2, { colour: 'red' })).thenThrows(ValidationError, /"colour": unknown parameter/);
    spec.given(given).when(setConfig(2, { 'filter-type': 'low', 'filter-order': '3' })).thenThrows(ValidationError, /"filter-order": must be 0 or an even number/);
    // 62.5 Hz: Nyquist is 31.25 Hz.
    spec.given(given).when(setConfig(2, { 'filter-type': 'high', 'filter-cutoff': '40' })).thenThrows(ValidationError, /"filter-cutoff": cut-off frequency is above Nyquist/);
  });

  it('asks for its check by running rather than running the block itself, and takes the answer made for its config only', () => {
    const given = history(first);
    const wavelet = { 'analysis-type': 'Wavelet', 'wavelet-level': '6' };
    let needed: unknown;
    try {
      impulseDecider.decide(setConfig(2, wavelet), fold(impulseDecider, given));
    } catch (error) {
      needed = error;
    }
    expect(needed).toBeInstanceOf(DspRunCheckNeeded);
    const check = (needed as DspRunCheckNeeded).check;
    // The input's 62.5 Hz and 2 s window, the whole config, the block's version.
    expect(check).toMatchObject({ type: 'spectral-analysis', frequencyHz: 62.5, windowSizeMs: 2000, implementationVersion: 4, config: { ...wavelet, 'fft-length': '16' } });
    const refusal = dspRunRefusals(check);
    expect(refusal).toEqual([expect.stringMatching(/^"wavelet-level": wavelet decomposition level is too high/)]);
    const answered = (runAnswers: DspRunAnswer[]): ImpulseCommand => ({ type: 'SetDspConfig', data: { projectId, dspId: 2, changes: wavelet, runAnswers, now } });
    spec.given(given).when(answered([{ check, refusals: refusal }])).thenThrows(ValidationError, /^Invalid DSP config for block 2 \(spectral-analysis\): "wavelet-level": wavelet decomposition level is too high/);
    // An answer made for another config (the saved one changed meanwhile) is not this config's answer.
    const other = { ...check, config: { ...check.config, 'wavelet-level': '1' } };
    expect(() => impulseDecider.decide(answered([{ check: other, refusals: [] }]), fold(impulseDecider, given))).toThrow(DspRunCheckNeeded);
    expect(impulseDecider.decide(answered([{ check: other, refusals: [] }, { check, refusals: [] }]), fold(impulseDecider, given))[0]!.type).toBe('DspConfigSet');
    // Refused by the cheap rules: no run is asked for.
    expect(() => impulseDecider.decide(setConfig(2, { 'fft-length': '100' }), fold(impulseDecider, given))).toThrow(ValidationError);
  });

  it('is cleared on request', () => {
    spec
      .given(history(first, setConfig(2, {})))
      .when({ type: 'ClearDspBlock', data: { projectId, dspId: 2, now } })
      .then([{ type: 'DspBlockCleared', data: { projectId, impulseId: 100, dspId: 2, cleared: now.toISOString() } }]);
    expect(stateAfter(first, setConfig(2, {}), { type: 'ClearDspBlock', data: { projectId, dspId: 2, now } }).impulses.get(100)!.dspConfigs.size).toBe(0);
  });
});

describe('texts and numbers an impulse keeps (no value the deciders accept can break a projection)', () => {
  const base = motionImpulse();
  const refused = (blocks: ImpulseBlocksRequest, message: RegExp, name?: string) =>
    spec.given([]).when(save(blocks, name === undefined ? {} : { name })).thenThrows(ValidationError, message);

  it('refuses an impulse name or tag that hides characters', () => {
    refused(base, /"name" contains an invisible formatting character \(U\+202E\)/, 'Motion\u202E');
    refused(base, /"name" contains a control character \(U\+0000\)/, 'Mo\u0000tion');
    const created = history(save(base));
    const update = (data: { name?: string; tags?: string[] }): ImpulseCommand => ({ type: 'UpdateImpulse', data: { projectId, impulseId: null, ...data, now } });
    spec.given(created).when(update({ tags: ['draft\u2066'] })).thenThrows(ValidationError, /"tags" contains an invisible formatting character/);
    spec.given(created).when(update({ tags: Array.from({ length: 33 }, (_, i) => `t${i}`) })).thenThrows(ValidationError, /at most 32 tags/);
  });

  it('refuses block names, titles and axes that hide characters or are unbounded, naming the block', () => {
    refused({ ...base, inputBlocks: [{ ...base.inputBlocks[0]!, title: 'Time\u202Eseries' }] }, /input block 1 \(time-series\): the block\.title contains an invisible/);
    refused({ ...base, dspBlocks: [{ ...base.dspBlocks[0]!, name: 'x'.repeat(257) }] }, /DSP block 2 \(spectral-analysis\): "name" must be 1 to 256 characters/);
    refused({ ...base, dspBlocks: [{ ...base.dspBlocks[0]!, axes: ['accX\u0000'] }] }, /DSP block 2 \(spectral-analysis\): the block\.axes\[0\] contains a control character/);
    refused({ ...base, learnBlocks: [{ ...base.learnBlocks[0]!, title: 'NN\n' }] }, /learn block 3 \(keras\): the block\.title contains a control character/);
  });

  it('refuses block numbers that are not finite or beyond any real sensor', () => {
    refused({ ...base, inputBlocks: [{ ...base.inputBlocks[0]!, frequencyHz: 1e308 }] }, /"frequencyHz" must be above 0 and at most 1000000000/);
    refused({ ...base, inputBlocks: [{ ...base.inputBlocks[0]!, windowSizeMs: Number.NaN }] }, /the block\.windowSizeMs must be a finite number, got NaN/);
    refused({ ...base, inputBlocks: [{ ...base.inputBlocks[0]!, classificationWindowIncreaseMs: 1e12 }] }, /"classificationWindowIncreaseMs" must be above 0 and at most 86400000/);
    refused({ ...base, dspBlocks: [{ ...base.dspBlocks[0]!, valuesPerAxis: Infinity }] }, /the block\.valuesPerAxis must be a finite number, got Infinity/);
  });
});

describe('a restore of a version\'s impulses', () => {
  const source = stateAfter(save(motionImpulse(), { newImpulseId: 7, name: 'Motion' }), setConfig(2, { 'scale-axes': '2' }));
  const motion = source.impulses.get(7)!;
  /** The version's impulse under the target's ids: blocks 1, 2, 3 become 11, 12, 13. */
  const restored = (impulseId = 107) => ({
    impulseId,
    name: motion.name,
    type: motion.type,
    tags: ['restored'],
    blocks: {
      inputBlocks: motion.blocks.inputBlocks.map((b) => ({ ...b, id: b.id + 10 })),
      dspBlocks: motion.blocks.dspBlocks.map((b) => ({ ...b, id: b.id + 10, input: b.input + 10 })),
      learnBlocks: motion.blocks.learnBlocks.map((b) => ({ ...b, id: b.id + 10, dsp: b.dsp.map((d) => d + 10) })),
      postProcessingBlocks: [],
    },
    dspConfigs: [[12, motion.dspConfigs.get(2)!]] as [number, Record<string, string>][],
  });
  const restore = (impulses = [restored()], maxImpulses = 3): ImpulseCommand => ({ type: 'RestoreImpulses', data: { projectId, impulses, maxImpulses, now } });
  const target = history(save(motionImpulse(), { newImpulseId: 50 }));

  it('deletes the live impulses and creates the version\'s under the new ids, with their tags, configs and block creation times', () => {
    spec
      .given(target)
      .when(restore())
      .thenMatches((events) => {
        expect(events.map((e) => e.type)).toEqual(['ImpulseDeleted', 'ImpulseCreated', 'ImpulseUpdated', 'DspConfigSet']);
        expect(events[0]!.data).toMatchObject({ impulseId: 50 });
        expect(events[1]!.data).toMatchObject({ impulseId: 107, name: 'Motion', dspBlocks: [{ id: 12, input: 11, createdAt: motion.blocks.dspBlocks[0]!.createdAt }], learnBlocks: [{ id: 13, dsp: [12] }] });
        expect(events[2]!.data).toMatchObject({ impulseId: 107, tags: ['restored'] });
        expect(events[3]!.data).toMatchObject({ impulseId: 107, dspId: 12, config: motion.dspConfigs.get(2) });
      });
  });
  it('records nothing when a retried restore finds its impulses live', () => {
    const after = [...target, ...impulseDecider.decide(restore(), fold(impulseDecider, target))];
    spec.given(after).when(restore()).then([]);
  });
  it('refuses block ids the project has given since the plan, more impulses than the plan allows, and a config for a block the impulse lacks', () => {
    spec.given(history(save(motionImpulse(), { newImpulseId: 50 }), { type: 'IssueBlockId', data: { projectId, now } }, { type: 'IssueBlockId', data: { projectId, now } }, ...Array.from({ length: 8 }, () => ({ type: 'IssueBlockId' as const, data: { projectId, now } })))).when(restore()).thenThrows(ConflictError, /Block id 11/);
    spec.given([]).when(restore([restored(107), { ...restored(108), blocks: { ...restored().blocks, inputBlocks: [], dspBlocks: [], learnBlocks: [] } }], 1)).thenThrows(ValidationError, /2 impulses/);
    spec.given([]).when(restore([{ ...restored(), dspConfigs: [[99, {}]] }])).thenThrows(ValidationError, /block 99/);
  });
});

// Records a generate-features result. The job computes it; the decider only checks that what enters
// the log is well-formed (hashes, bounded finite numbers, class names by the text rules), so no value
// can break a projection, and that a result is never recorded for a block twice by the same job.
import { ValidationError } from '../shared/errors';
import type { Decider } from '../shared/decider';
import { checkId, checkIsoTimestamp, checkNumber } from '../shared/numberRules';
import { checkText, NAME_RULE, TOKEN_RULE } from '../shared/textRules';
import { FEATURE_CATEGORIES, NORMALIZE_DATA, type DspFeaturesEvent, type DspFeaturesGenerated } from './dspFeaturesEvents';

export type DspFeaturesCommand = { type: 'RecordDspFeatures'; data: DspFeaturesGenerated['data'] };

export interface DspFeaturesState {
  /** Jobs whose result is recorded (a retried job's second record is a no-op). */
  jobIds: ReadonlySet<number>;
}

const SHA256 = /^[0-9a-f]{64}$/;
const COUNT = { min: 0, max: 1e9, integer: true };
/** Features per window and classes: far above any block's output, bounded so the event stays bounded. */
export const MAX_FEATURES = 1_000_000;
export const MAX_CLASSES = 10_000;

function checkHash(value: string, field: string): void {
  if (typeof value !== 'string' || !SHA256.test(value)) throw new ValidationError(`${field} must be a SHA-256 in hex`);
}

function checkRecord(d: DspFeaturesGenerated['data']): DspFeaturesGenerated['data'] {
  for (const [v, f] of [[d.projectId, 'projectId'], [d.impulseId, 'impulseId'], [d.dspId, 'dspId'], [d.jobId, 'jobId'], [d.parameters.dspId, 'parameters.dspId']] as const) checkId(v, f);
  if (d.parameters.dspId !== d.dspId) throw new ValidationError('parameters.dspId must be the block the features belong to');
  if (!NORMALIZE_DATA.includes(d.parameters.normalizeData)) throw new ValidationError(`parameters.normalizeData must be one of ${NORMALIZE_DATA.join(', ')}`);
  checkNumber(d.implementationVersion, 'implementationVersion', { min: 1, max: 1000, integer: true });
  for (const [key, value] of Object.entries(d.dspConfig)) {
    checkText(key, 'dspConfig key', TOKEN_RULE);
    checkText(value, `dspConfig.${key}`, { max: 1024, allowEmpty: true });
  }
  let windows = 0;
  for (const c of FEATURE_CATEGORIES) {
    const a = d.categories[c];
    if (!a) throw new ValidationError(`categories.${c} is missing`);
    checkHash(a.x, `categories.${c}.x`);
    checkHash(a.y, `categories.${c}.y`);
    if (a.raw !== undefined) checkHash(a.raw, `categories.${c}.raw`);
    windows += checkNumber(a.windowCount, `categories.${c}.windowCount`, COUNT);
  }
  checkHash(d.metadata, 'metadata');
  if (d.impulseFingerprint !== undefined) checkHash(d.impulseFingerprint, 'impulseFingerprint');
  if (d.explorer !== null) checkHash(d.explorer, 'explorer');
  if (d.importance !== null) checkHash(d.importance, 'importance');
  checkNumber(d.featureCount, 'featureCount', { min: 0, max: MAX_FEATURES, integer: true });
  if (checkNumber(d.windowCount, 'windowCount', COUNT) !== windows) throw new ValidationError('windowCount must be the windows of both categories');
  if (d.classes.length > MAX_CLASSES) throw new ValidationError(`classes: at most ${MAX_CLASSES}`);
  d.classes.forEach((c, i) => checkText(c, `classes[${i}]`, { ...NAME_RULE, allowEmpty: true }));
  d.skippedSampleIds.forEach((id, i) => checkId(id, `skippedSampleIds[${i}]`));
  checkText(d.sourcePosition, 'sourcePosition', TOKEN_RULE);
  let scaler = d.scaler;
  if (scaler) {
    for (const part of ['mean', 'scale'] as const) {
      if (scaler[part].length !== d.featureCount) throw new ValidationError(`scaler.${part} must have one value per feature`);
    }
    // checkNumber turns -0 into 0, which JSON would do on the way back anyway.
    const bounded = (part: 'mean' | 'scale') => scaler![part].map((v, i) => checkNumber(v, `scaler.${part}[${i}]`, { min: -3.4e38, max: 3.4e38 }));
    scaler = { mean: bounded('mean'), scale: bounded('scale') };
  }
  checkIsoTimestamp(d.generated, 'generated');
  return { ...d, scaler };
}

export const dspFeaturesDecider: Decider<DspFeaturesCommand, DspFeaturesEvent, DspFeaturesState> = {
  initialState: () => ({ jobIds: new Set() }),
  decide(command, state) {
    const data = checkRecord(command.data);
    if (state.jobIds.has(data.jobId)) return [];
    return [{ type: 'DspFeaturesGenerated', data }];
  },
  evolve(state, event) {
    return { jobIds: new Set([...state.jobIds, event.data.jobId]) };
  },
};

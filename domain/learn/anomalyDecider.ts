// The anomaly block's settings and trained models. Settings are checked here so no value that a
// projection or a training job could not use enters the log; a model is recorded once per job (a
// retried job's second record is a no-op), and only when it is well-formed.
import type { Decider } from '../shared/decider';
import { ValidationError } from '../shared/errors';
import { checkId, checkIsoTimestamp, checkNumber } from '../shared/numberRules';
import { checkText, TOKEN_RULE } from '../shared/textRules';
import type { AnomalyEvent, AnomalyModelTrained, AnomalySettings, AnomalySettingsChanged } from './anomalyEvents';

export type AnomalyCommand =
  | { type: 'ChangeAnomalySettings'; data: AnomalySettingsChanged['data'] }
  | { type: 'RecordAnomalyModel'; data: AnomalyModelTrained['data'] };

export interface AnomalyState {
  jobIds: ReadonlySet<number>;
}

/** Bounds that keep an event small and a training job finite. */
export const MAX_CLUSTER_COUNT = 1000;
export const MAX_ANOMALY_AXES = 10_000;
/** Feature indexes: below the DSP features' own bound (dspFeaturesDecider MAX_FEATURES, times a few blocks). */
export const MAX_AXIS_INDEX = 10_000_000;
export const CONFIDENCE_RULE = { min: -1e6, max: 1e6 };

const SHA256 = /^[0-9a-f]{64}$/;

export function checkAxes(axes: unknown, field = 'axes'): number[] {
  if (!Array.isArray(axes)) throw new ValidationError(`${field} must be a list of feature indexes`);
  if (axes.length === 0) throw new ValidationError(`${field}: choose at least one axis`);
  if (axes.length > MAX_ANOMALY_AXES) throw new ValidationError(`${field}: at most ${MAX_ANOMALY_AXES} axes`);
  const checked = axes.map((a, i) => checkNumber(a as number, `${field}[${i}]`, { min: 0, max: MAX_AXIS_INDEX, integer: true }));
  if (new Set(checked).size !== checked.length) throw new ValidationError(`${field}: an axis is listed twice`);
  return checked;
}

export const checkClusterCount = (value: number, field = 'clusterCount'): number => checkNumber(value, field, { min: 1, max: MAX_CLUSTER_COUNT, integer: true });
export const checkConfidence = (value: number, field = 'minimumConfidenceRating'): number => checkNumber(value, field, CONFIDENCE_RULE);

function checkSettingsChange(d: AnomalySettingsChanged['data']): AnomalySettingsChanged['data'] {
  checkId(d.projectId, 'projectId');
  checkId(d.learnId, 'learnId');
  checkIsoTimestamp(d.changed, 'changed');
  const out: AnomalySettingsChanged['data'] = { projectId: d.projectId, learnId: d.learnId, changed: d.changed };
  if (d.axes !== undefined) out.axes = checkAxes(d.axes);
  if (d.clusterCount !== undefined) out.clusterCount = checkClusterCount(d.clusterCount);
  if (d.minimumConfidenceRating !== undefined) out.minimumConfidenceRating = checkConfidence(d.minimumConfidenceRating);
  if (out.axes === undefined && out.clusterCount === undefined && out.minimumConfidenceRating === undefined) throw new ValidationError('Nothing to change: give minimumConfidenceRating');
  return out;
}

function checkSettings(s: AnomalySettings, field: string): AnomalySettings {
  return { axes: checkAxes(s.axes, `${field}.axes`), clusterCount: checkClusterCount(s.clusterCount, `${field}.clusterCount`), minimumConfidenceRating: checkConfidence(s.minimumConfidenceRating, `${field}.minimumConfidenceRating`) };
}

function checkModel(d: AnomalyModelTrained['data']): AnomalyModelTrained['data'] {
  for (const [v, f] of [[d.projectId, 'projectId'], [d.learnId, 'learnId'], [d.impulseId, 'impulseId'], [d.jobId, 'jobId']] as const) checkId(v, f);
  if (typeof d.model !== 'string' || !SHA256.test(d.model)) throw new ValidationError('model must be a SHA-256 in hex');
  if (!Array.isArray(d.features) || d.features.length === 0 || d.features.length > 100) throw new ValidationError('features: from 1 to 100 DSP blocks');
  const features = d.features.map((f, i) => {
    if (typeof f.x !== 'string' || !SHA256.test(f.x)) throw new ValidationError(`features[${i}].x must be a SHA-256 in hex`);
    checkText(f.sourcePosition, `features[${i}].sourcePosition`, TOKEN_RULE);
    if (f.position !== undefined) checkText(f.position, `features[${i}].position`, TOKEN_RULE);
    return {
      dspId: checkId(f.dspId, `features[${i}].dspId`),
      x: f.x,
      windowCount: checkNumber(f.windowCount, `features[${i}].windowCount`, { min: 1, max: 1e9, integer: true }),
      featureCount: checkNumber(f.featureCount, `features[${i}].featureCount`, { min: 1, max: MAX_AXIS_INDEX, integer: true }),
      sourcePosition: f.sourcePosition,
      ...(f.position !== undefined ? { position: f.position } : {}),
    };
  });
  const settings = checkSettings(d.settings, 'settings');
  const clusterCount = checkNumber(d.clusterCount, 'clusterCount', { min: 1, max: settings.clusterCount, integer: true });
  return {
    projectId: d.projectId,
    learnId: d.learnId,
    impulseId: d.impulseId,
    jobId: d.jobId,
    model: d.model,
    features,
    settings,
    seed: checkNumber(d.seed, 'seed', { min: 0, max: 2 ** 32 - 1, integer: true }),
    clusterCount,
    iterations: checkNumber(d.iterations, 'iterations', { min: 0, max: 1e9, integer: true }),
    trained: checkIsoTimestamp(d.trained, 'trained'),
  };
}

function decideAnomaly(command: AnomalyCommand, state: AnomalyState): AnomalyEvent[] {
  switch (command.type) {
    case 'ChangeAnomalySettings':
      return [{ type: 'AnomalySettingsChanged', data: checkSettingsChange(command.data) }];
    case 'RecordAnomalyModel': {
      const data = checkModel(command.data);
      return state.jobIds.has(data.jobId) ? [] : [{ type: 'AnomalyModelTrained', data }];
    }
  }
}

export const anomalyDecider: Decider<AnomalyCommand, AnomalyEvent, AnomalyState> = {
  initialState: () => ({ jobIds: new Set() }),
  decide: decideAnomaly,
  evolve(state, event) {
    return event.type === 'AnomalyModelTrained' ? { jobIds: new Set([...state.jobIds, event.data.jobId]) } : state;
  },
};

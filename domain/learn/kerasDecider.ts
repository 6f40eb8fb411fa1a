// A keras learn block's settings and trained models. Settings changes are merged and checked whole
// (kerasSettings.ts); a model record is checked to be well-formed (hashes, bounded finite numbers) so
// no value can break a projection, and a retried job records its model once.
import { ValidationError } from '../shared/errors';
import type { Decider } from '../shared/decider';
import { checkId, checkIsoTimestamp, checkNumber } from '../shared/numberRules';
import { checkText, NAME_RULE, TOKEN_RULE } from '../shared/textRules';
import type { KerasEvent, KerasModelTrained } from './kerasEvents';
import { applyKerasChange, DEFAULT_KERAS_SETTINGS, type KerasSettings, type KerasSettingsChange } from './kerasSettings';

export type KerasCommand =
  | { type: 'SetKerasSettings'; data: { projectId: number; learnId: number; change: KerasSettingsChange; now: Date } }
  | { type: 'RecordKerasModel'; data: KerasModelTrained['data'] };

export interface KerasState {
  settings: KerasSettings;
  jobIds: ReadonlySet<number>;
}

const SHA256 = /^[0-9a-f]{64}$/;
const COUNT = { min: 0, max: 1e9, integer: true };
const MAX_CLASSES = 10_000;

function checkHash(value: string, field: string): void {
  if (typeof value !== 'string' || !SHA256.test(value)) throw new ValidationError(`${field} must be a SHA-256 in hex`);
}

const unitOrNull = (v: number | null, field: string) => (v === null ? null : checkNumber(v, field, { min: 0, max: 1 }));

function checkRecord(d: KerasModelTrained['data']): KerasModelTrained['data'] {
  for (const [v, f] of [[d.projectId, 'projectId'], [d.learnId, 'learnId'], [d.jobId, 'jobId']] as const) checkId(v, f);
  checkHash(d.model, 'model');
  checkNumber(d.seed, 'seed', { min: 0, max: 2 ** 32 - 1, integer: true });
  // The settings as the job used them: checked as a change from the defaults is.
  const settings = applyKerasChange(DEFAULT_KERAS_SETTINGS, d.settings);
  if (d.features.length === 0) throw new ValidationError('features: a model is trained on at least one DSP block');
  d.features.forEach((f, i) => {
    checkId(f.dspId, `features[${i}].dspId`);
    checkHash(f.x, `features[${i}].x`);
    checkHash(f.y, `features[${i}].y`);
    checkText(f.position, `features[${i}].position`, TOKEN_RULE);
    checkText(f.sourcePosition, `features[${i}].sourcePosition`, TOKEN_RULE);
  });
  if (d.classes.length < 2 || d.classes.length > MAX_CLASSES) throw new ValidationError(`classes: from 2 to ${MAX_CLASSES}`);
  d.classes.forEach((c, i) => checkText(c, `classes[${i}]`, { ...NAME_RULE, allowEmpty: true }));
  d.inputShape.forEach((n, i) => checkNumber(n, `inputShape[${i}]`, { min: 1, max: 1e9, integer: true }));
  checkNumber(d.parameterCount, 'parameterCount', COUNT);
  checkNumber(d.operations, 'operations', { min: 0, max: 1e15, integer: true });
  checkNumber(d.trainingWindowCount, 'trainingWindowCount', COUNT);
  const v = d.validation;
  const loss = v.loss === null ? null : checkNumber(v.loss, 'validation.loss', { min: 0, max: 3.4e38 });
  const accuracy = unitOrNull(v.accuracy, 'validation.accuracy');
  checkNumber(v.windowCount, 'validation.windowCount', COUNT);
  if (d.mode !== undefined && d.mode !== 'regression') throw new ValidationError('mode must be "regression" when given');
  const regression = d.mode === 'regression';
  if (v.confusionMatrix.length !== (regression ? 0 : d.classes.length)) throw new ValidationError(regression ? 'validation.confusionMatrix must be empty for a regression model' : 'validation.confusionMatrix must have a row per class');
  if ((v.regression !== undefined) !== regression) throw new ValidationError('validation.regression is given for a regression model, and only then');
  const measures = v.regression && {
    meanSquaredError: v.regression.meanSquaredError === null ? null : checkNumber(v.regression.meanSquaredError, 'validation.regression.meanSquaredError', { min: 0, max: 3.4e38 }),
    meanAbsoluteError: v.regression.meanAbsoluteError === null ? null : checkNumber(v.regression.meanAbsoluteError, 'validation.regression.meanAbsoluteError', { min: 0, max: 3.4e38 }),
    explainedVariance: v.regression.explainedVariance === null ? null : checkNumber(v.regression.explainedVariance, 'validation.regression.explainedVariance', { min: -3.4e38, max: 1 }),
  };
  v.confusionMatrix.forEach((row, i) => {
    if (row.length !== d.classes.length + 1) throw new ValidationError(`validation.confusionMatrix[${i}] must have a column per class and one for uncertain`);
    row.forEach((n, j) => checkNumber(n, `validation.confusionMatrix[${i}][${j}]`, COUNT));
  });
  for (const [name, r] of Object.entries(v.report)) {
    checkText(name, 'validation.report key', { ...NAME_RULE, allowEmpty: true });
    for (const k of ['precision', 'recall', 'f1-score'] as const) checkNumber(r[k], `validation.report.${name}.${k}`, { min: 0, max: 1 });
    checkNumber(r.support, `validation.report.${name}.support`, COUNT);
  }
  checkIsoTimestamp(d.trained, 'trained');
  return { ...d, settings, validation: { ...v, loss, accuracy, ...(measures ? { regression: measures } : {}) } };
}

export const kerasDecider: Decider<KerasCommand, KerasEvent, KerasState> = {
  initialState: () => ({ settings: DEFAULT_KERAS_SETTINGS, jobIds: new Set() }),
  decide(command, state) {
    switch (command.type) {
      case 'SetKerasSettings': {
        const { projectId, learnId, change, now } = command.data;
        checkId(projectId, 'projectId');
        checkId(learnId, 'learnId');
        const settings = applyKerasChange(state.settings, change);
        return [{ type: 'KerasSettingsSet', data: { projectId, learnId, settings, set: now.toISOString() } }];
      }
      case 'RecordKerasModel': {
        const data = checkRecord(command.data);
        if (state.jobIds.has(data.jobId)) return [];
        return [{ type: 'KerasModelTrained', data }];
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'KerasSettingsSet':
        return { ...state, settings: event.data.settings };
      case 'KerasModelTrained':
        return { ...state, jobIds: new Set([...state.jobIds, event.data.jobId]) };
    }
  },
};

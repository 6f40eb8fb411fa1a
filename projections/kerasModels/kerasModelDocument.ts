import type { KerasModelTrained, KerasValidationMetrics } from '../../domain/learn/kerasEvents';
import type { KerasSettings } from '../../domain/learn/kerasSettings';

type ModelData = KerasModelTrained['data'];

/**
 * A model as the read model keeps it: FerretDB (which CI runs on) refuses nested arrays, and class
 * names may be keys MongoDB refuses (`.`, `$`), so the confusion matrix is a list of rows as objects
 * and the per-class report a list; `kerasModelOf` turns it back into the event's shape.
 */
export type StoredKerasModel = Omit<ModelData, 'validation'> & {
  validation: Omit<KerasValidationMetrics, 'confusionMatrix' | 'report'> & {
    confusionMatrix: { counts: number[] }[];
    report: ({ label: string } & KerasValidationMetrics['report'][string])[];
  };
};

/** A keras learn block of a project: its settings (null until set: the defaults apply) and its latest model. */
export interface KerasModelDocument {
  _id: string;
  projectId: number;
  learnId: number;
  settings: KerasSettings | null;
  model: StoredKerasModel | null;
  _position: string;
  [key: string]: unknown;
}

export const KERAS_MODELS = 'kerasModels';
export const kerasModelId = (projectId: number, learnId: number): string => `${projectId}:${learnId}`;

export function storedKerasModel(model: ModelData): StoredKerasModel {
  const { confusionMatrix, report, ...rest } = model.validation;
  return {
    ...model,
    validation: { ...rest, confusionMatrix: confusionMatrix.map((counts) => ({ counts })), report: Object.entries(report).map(([label, r]) => ({ label, ...r })) },
  };
}

export function kerasModelOf(stored: StoredKerasModel): ModelData {
  const { confusionMatrix, report, ...rest } = stored.validation;
  return {
    ...stored,
    validation: { ...rest, confusionMatrix: confusionMatrix.map((r) => r.counts), report: Object.fromEntries(report.map(({ label, ...r }) => [label, r])) },
  };
}

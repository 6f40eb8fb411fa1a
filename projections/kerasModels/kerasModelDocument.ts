import type { KerasModelTrained } from '../../domain/learn/kerasEvents';
import type { KerasSettings } from '../../domain/learn/kerasSettings';

/** A keras learn block of a project: its settings (null until set: the defaults apply) and its latest model. */
export interface KerasModelDocument {
  _id: string;
  projectId: number;
  learnId: number;
  settings: KerasSettings | null;
  model: KerasModelTrained['data'] | null;
  _position: string;
  [key: string]: unknown;
}

export const KERAS_MODELS = 'kerasModels';
export const kerasModelId = (projectId: number, learnId: number): string => `${projectId}:${learnId}`;

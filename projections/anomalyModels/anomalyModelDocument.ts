import type { AnomalyModelTrained } from '../../domain/learn/anomalyEvents';

/** The `anomalyModels` read model: one document per anomaly learn block of a project, its settings and latest model. */
export interface AnomalyModelDocument {
  _id: string;
  projectId: number;
  learnId: number;
  /** Null until set (the routes answer the defaults then). */
  axes: number[] | null;
  clusterCount: number | null;
  minimumConfidenceRating: number | null;
  /** The latest trained model's record; null before the first. */
  model: AnomalyModelTrained['data'] | null;
  _position: string;
  [key: string]: unknown;
}

export const ANOMALY_MODELS = 'anomalyModels';
export const anomalyModelId = (projectId: number, learnId: number): string => `${projectId}:${learnId}`;

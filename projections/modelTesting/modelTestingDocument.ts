import type { ModelTested } from '../../domain/learn/modelTestingEvents';

/** The `modelTesting` read model: one document per impulse of a project, its latest model testing run. */
export interface ModelTestingDocument {
  _id: string;
  projectId: number;
  impulseId: number;
  jobId: number;
  /** SHA-256 of the results blob (domain/learn/modelTestingResults.ts). */
  results: string;
  summary: ModelTested['data']['summary'];
  tested: string;
  _position: string;
  [key: string]: unknown;
}

export const MODEL_TESTING = 'modelTesting';
export const modelTestingId = (projectId: number, impulseId: number): string => `${projectId}:${impulseId}`;

import type { CategorySummary, SUMMARY_KEYS } from '../projects/projectDocument';

/**
 * The `projectData` read model, the samples projection's summary of a project's data: one document
 * per project, made at its creation, joined to the project document by ProjectQueries.
 */
export interface ProjectDataDocument {
  _id: number;
  data: Record<(typeof SUMMARY_KEYS)[number], CategorySummary>;
  /** Live samples by kind (time-series, audio, image, video): what sensor the project is about. */
  sampleKinds: Record<string, number>;
  /** Training data arrived since the project was made. */
  hasNewTrainingData: boolean;
  /** The last sample added or deleted; null before the first. Its position is `_position`. */
  lastModified: string | null;
  lastModificationDetails: string | null;
  _position: string;
  [key: string]: unknown;
}

export const PROJECT_DATA = 'projectData';

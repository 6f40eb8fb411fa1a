export interface ProjectCollaboratorEntry {
  userId: number;
  isOwner: boolean;
  added: string;
}

/** Per category: how many samples, how long, and how many per label (keys encoded by `labelKey`). */
export interface CategorySummary {
  dataCount: number;
  totalLengthMs: number;
  labels: Record<string, number>;
}

export const SUMMARY_KEYS = ['training', 'testing', 'validation', 'postProcessing', 'anomaly'] as const;

export const emptyData = (): Record<(typeof SUMMARY_KEYS)[number], CategorySummary> =>
  Object.fromEntries(SUMMARY_KEYS.map((k) => [k, { dataCount: 0, totalLengthMs: 0, labels: {} }])) as Record<(typeof SUMMARY_KEYS)[number], CategorySummary>;

/** The `projects` read model: one document per project. */
export interface ProjectDocument {
  _id: number;
  id: number;
  name: string;
  description: string;
  created: string;
  ownerUserId: number;
  isPublic: boolean;
  collaborators: ProjectCollaboratorEntry[];
  /** For "which projects can this user see" queries. */
  collaboratorIds: number[];
  developmentApiKey: string | null;
  developmentHmacKey: string | null;
  data: Record<(typeof SUMMARY_KEYS)[number], CategorySummary>;
  /** Training data arrived since the last training. */
  hasNewTrainingData: boolean;
  lastModified: string;
  lastModificationDetails: string;
  deleted: boolean;
  _position: string;
  [key: string]: unknown;
}

export const PROJECTS = 'projects';

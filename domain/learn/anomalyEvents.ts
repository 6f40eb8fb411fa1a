import type { DomainEvent } from '../shared/decider';

// The K-means anomaly block of a project's impulse, one stream per (project, learn block): its
// settings as changed over time, and each trained model. A model is a JSON blob (anomalyKmeans.ts
// AnomalyModel) named by its content hash, with what it was trained from, so which data made which
// model can be traced and the training rerun: the features' blobs and log positions, the settings
// and the seed. The latest AnomalyModelTrained is the block's model.

export const anomalyStream = (projectId: number, learnId: number): string => `anomaly-${projectId}-${learnId}`;

/** What a user chooses for the block. */
export interface AnomalySettings {
  /** Indexes into the block's feature vector (its DSP blocks' features concatenated in impulse order). */
  axes: number[];
  clusterCount: number;
  /** Scores above it are flagged as anomalies. */
  minimumConfidenceRating: number;
}

/** Defaults as the real service's K-means block. */
export const DEFAULT_CLUSTER_COUNT = 32;
export const DEFAULT_MINIMUM_CONFIDENCE_RATING = 0.3;
/** The seed a training job uses unless it is given one: reruns on the same features give the same model. */
export const DEFAULT_ANOMALY_SEED = 1;

/** Only the fields given are changed (the SDK's SetAnomalyParameterRequest sets only minimumConfidenceRating; a training request sets all three). */
export type AnomalySettingsChanged = DomainEvent<
  'AnomalySettingsChanged',
  { projectId: number; learnId: number; axes?: number[]; clusterCount?: number; minimumConfidenceRating?: number; changed: string }
>;

/** The training X of one DSP block the model was trained on. */
export interface AnomalyTrainingFeatures {
  dspId: number;
  /** SHA-256 of the block's training X .npy. */
  x: string;
  windowCount: number;
  featureCount: number;
  /** The DspFeaturesGenerated record's sourcePosition: the log prefix the features came from. */
  sourcePosition: string;
  /**
   * The features' read-model position (`_position` of their DspFeaturesDocument), which a regeneration
   * changes even when it gives the same X: the model is current while it matches. Absent from models
   * recorded before it was kept; those count as needing training again.
   */
  position?: string;
}

export type AnomalyModelTrained = DomainEvent<
  'AnomalyModelTrained',
  {
    projectId: number;
    learnId: number;
    impulseId: number;
    jobId: number;
    /** SHA-256 of the model JSON blob. */
    model: string;
    features: AnomalyTrainingFeatures[];
    settings: AnomalySettings;
    seed: number;
    /** Clusters kept (a centre no window is nearest to is dropped). */
    clusterCount: number;
    iterations: number;
    trained: string;
  }
>;

export type AnomalyEvent = AnomalySettingsChanged | AnomalyModelTrained;

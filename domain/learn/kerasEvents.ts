import type { DomainEvent } from '../shared/decider';
import type { RegressionMetrics } from './kerasRegression';
import type { KerasSettings } from './kerasSettings';

// One stream per keras learn block of a project: its settings as set (each event holds the whole
// settings after the change) and its trained models (the latest supersedes the earlier ones). A model
// event names what traces and reproduces it: the model blob's content hash, the features it was
// trained on (blob hashes and log positions per DSP block), the settings and the seed.

export const kerasStream = (projectId: number, learnId: number): string => `keras-${projectId}-${learnId}`;

export type KerasSettingsSet = DomainEvent<'KerasSettingsSet', { projectId: number; learnId: number; settings: KerasSettings; set: string }>;

/** The features of one DSP block a model was trained on (its DspFeaturesGenerated record). */
export interface KerasTrainingFeatures {
  dspId: number;
  /** SHA-256 of the training X and y .npy blobs. */
  x: string;
  y: string;
  /** The features' read-model position (`_position` of their DspFeaturesDocument) and source samples' position. */
  position: string;
  sourcePosition: string;
}

/** The SDK's KerasModelMetadataMetrics' measured part, on the validation windows. Non-finite values (a model that diverged) are null. */
export interface KerasValidationMetrics {
  loss: number | null;
  accuracy: number | null;
  /** Rows: actual class; columns: predicted class, then "uncertain" (below the minimum confidence). */
  confusionMatrix: number[][];
  /** Per class: precision, recall, F1 and support, as scikit-learn's classification report. */
  report: Record<string, { precision: number; recall: number; 'f1-score': number; support: number }>;
  windowCount: number;
  /** A regression model's measures (its loss is the mean squared error; accuracy null, no matrix or report). */
  regression?: RegressionMetrics;
}

export type KerasModelTrained = DomainEvent<
  'KerasModelTrained',
  {
    projectId: number;
    learnId: number;
    jobId: number;
    /** A keras-regression block's model (one linear output; `classes` are the labels, numbers); absent: a classifier. */
    mode?: 'regression';
    /** SHA-256 of the model blob (kerasModelBlob.ts: TensorFlow.js layers model.json and weights in one blob). */
    model: string;
    seed: number;
    settings: KerasSettings;
    features: KerasTrainingFeatures[];
    classes: string[];
    inputShape: number[];
    parameterCount: number;
    operations: number;
    trainingWindowCount: number;
    validation: KerasValidationMetrics;
    trained: string;
  }
>;

export type KerasEvent = KerasSettingsSet | KerasModelTrained;

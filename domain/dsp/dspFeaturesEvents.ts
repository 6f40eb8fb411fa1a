import type { DomainEvent } from '../shared/decider';

// The result of a generate-features job, one stream per DSP block of a project: each run appends one
// DspFeaturesGenerated, and the latest supersedes the earlier ones. The features themselves are
// blobs (X and y float32 .npy per category, the metadata JSON), named here by their content hashes,
// with what is needed to trace and reproduce them: the job's parameters, the block's config, the
// read-model position of the newest sample used, and the fitted standard scaler.

export const dspFeaturesStream = (projectId: number, dspId: number): string => `dsp-features-${projectId}-${dspId}`;

export const FEATURE_CATEGORIES = ['training', 'testing'] as const;
export type FeatureCategory = (typeof FEATURE_CATEGORIES)[number];

export const NORMALIZE_DATA = ['none', 'normalize-channel-standard-scaler'] as const;
export type NormalizeData = (typeof NORMALIZE_DATA)[number];

export interface GenerateFeaturesParameters {
  dspId: number;
  calculateFeatureImportance: boolean;
  skipFeatureExplorer: boolean;
  normalizeData: NormalizeData;
}

/** One category's X (windows × features) and y (windows) as blobs. */
export interface FeatureArtifacts {
  /** SHA-256 of the X .npy blob. */
  x: string;
  y: string;
  /**
   * SHA-256 of the raw windows .npy (float32, windows × values of the window as the block got it:
   * time series interleaved by row, images as 0xRRGGBB pixels). Absent from results recorded before
   * the job stored them.
   */
  raw?: string;
  windowCount: number;
}

export type DspFeaturesGenerated = DomainEvent<
  'DspFeaturesGenerated',
  {
    projectId: number;
    impulseId: number;
    dspId: number;
    jobId: number;
    parameters: GenerateFeaturesParameters;
    /** The block's config the features were made with (also in the metadata). */
    dspConfig: Record<string, string>;
    implementationVersion: number;
    categories: Record<FeatureCategory, FeatureArtifacts>;
    /** SHA-256 of the DSP metadata JSON blob (domain/dsp/dspMetadata.ts). */
    metadata: string;
    featureCount: number;
    /** Windows over both categories. */
    windowCount: number;
    /** The class list; y holds 1-based indexes into it. */
    classes: string[];
    /** Samples that gave no window (skipped with a log line), by id. */
    skippedSampleIds: number[];
    /** Read-model position (`_position`) of the newest sample used: the log prefix the data came from. */
    sourcePosition: string;
    /** SHA-256 of the feature explorer JSON ({training, testing}: domain/dsp/featureExplorer.ts); null when skipped. */
    explorer: string | null;
    /** SHA-256 of the feature importance JSON (DspFeatureImportanceResponse); null when not asked or not possible. */
    importance: string | null;
    /** Fitted on training windows when normalizeData asked for it; X of both categories is scaled. */
    scaler: { mean: number[]; scale: number[] } | null;
    /**
     * SHA-256 of what the features depend on in the impulse (featuresFingerprint.ts), as the job read
     * it: the impulse is complete while it matches the blocks' current one. Absent from results
     * recorded before it was kept; those never count as current.
     */
    impulseFingerprint?: string;
    generated: string;
  }
>;

export type DspFeaturesEvent = DspFeaturesGenerated;

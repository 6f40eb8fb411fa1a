import type { DomainEvent } from '../shared/decider';

// Model testing of a project (the classify job, JobsApi.startClassifyJob): each finished run is one
// event naming the JSON blob that holds every testing sample's classified windows (modelTestingResults.ts),
// with a summary the read model keeps. The latest run of an impulse is its result.

export const modelTestingStream = (projectId: number): string => `model-testing-${projectId}`;

export interface ModelTestingSummary {
  /** Testing samples classified, and those the impulse could not take (named in the blob with why). */
  sampleCount: number;
  skippedSampleCount: number;
  /** Labelled windows measured (unlabelled ones are classified but not scored). */
  windowCount: number;
  /** Correct windows over labelled windows; null without a labelled window. */
  accuracy: number | null;
  /** The mean of each actual class's recall; null without a labelled window. */
  balancedAccuracy: number | null;
}

export type ModelTested = DomainEvent<
  'ModelTested',
  {
    projectId: number;
    impulseId: number;
    jobId: number;
    /** SHA-256 of the results JSON blob. */
    results: string;
    summary: ModelTestingSummary;
    tested: string;
  }
>;

export type ModelTestingEvent = ModelTested;

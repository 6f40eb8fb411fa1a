import type { DomainEvent } from '../shared/decider';

export const sampleStream = (sampleId: number): string => `sample-${sampleId}`;

/** Where an ingested file goes. Anomaly uploads from deployed devices stay apart from the data sets. */
export const INGESTION_CATEGORIES = ['training', 'testing', 'anomaly'] as const;
export type IngestionCategory = (typeof INGESTION_CATEGORIES)[number];
export type SampleCategory = IngestionCategory | 'validation' | 'post-processing';

export interface BoundingBox {
  label: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface StructuredLabel {
  label: string;
  startIndex: number;
  endIndex: number;
}

export type SampleIngested = DomainEvent<
  'SampleIngested',
  {
    sampleId: number;
    projectId: number;
    category: SampleCategory;
    /** The stored file name (with the unique id when x-add-date-id asked for one). */
    fileName: string;
    label: string | null;
    /** Content address of the file in the blob store. */
    sha256: string;
    size: number;
    contentType: string;
    kind: 'time-series' | 'audio' | 'image' | 'video';
    intervalMs: number;
    frequency: number;
    sensors: { name: string; units: string }[];
    valuesCount: number;
    totalLengthMs: number;
    deviceName: string | null;
    deviceType: string | null;
    width: number | null;
    height: number | null;
    signatureMethod: 'HS256' | 'none' | null;
    signatureValidate: boolean;
    /** The id of the HMAC key that verified the signature. */
    signatureKeyId: number | null;
    metadata: Record<string, string>;
    boundingBoxes: BoundingBox[];
    structuredLabels: StructuredLabel[];
    uploadSource: string | null;
    ingested: string;
  }
>;

export type SampleDeleted = DomainEvent<'SampleDeleted', { sampleId: number; projectId: number; deleted: string }>;

export type SampleEvent = SampleIngested | SampleDeleted;

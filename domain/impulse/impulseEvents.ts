import type { DomainEvent } from '../shared/decider';
import type { ImpulseType, InputBlockType, LearnBlockType } from './blockCatalog';
import type { DspConfigValues } from './dspConfig';

/** All impulses of a project live in one stream, so block ids can be kept unique within the project. */
export const impulsesStream = (projectId: number): string => `impulses-${projectId}`;

/** The SDK's ImpulseInputBlock, as stored. */
export interface InputBlock {
  id: number;
  type: InputBlockType;
  name: string;
  title: string;
  axes?: string[];
  windowSizeMs?: number;
  windowIncreaseMs?: number;
  frequencyHz?: number;
  classificationWindowIncreaseMs?: number;
  padZeros?: boolean;
  labelingMethodMultiLabel?: { type: 'end-of-window' | 'anywhere-in-window' | 'anywhere-in-window-min-percentage' | 'majority-in-window'; labels?: string[]; minPercentage?: number };
  imageWidth?: number;
  imageHeight?: number;
  resizeMode?: 'squash' | 'fit-short' | 'fit-long' | 'crop';
  resizeMethod?: 'lanczos3' | 'nearest';
  cropAnchor?: 'top-left' | 'top-center' | 'top-right' | 'middle-left' | 'middle-center' | 'middle-right' | 'bottom-left' | 'bottom-center' | 'bottom-right';
  datasetSubset?: { includePercentage: number; seed?: number };
  createdAt: string;
}

/** The SDK's ImpulseDspBlock, as stored (`input` always resolved). */
export interface DspBlock {
  id: number;
  type: string;
  name: string;
  axes: string[];
  title: string;
  valuesPerAxis?: number;
  input: number;
  implementationVersion: number;
  namedAxes?: { name: string; description?: string; required?: boolean; selectedAxis?: string }[];
  createdAt: string;
}

export interface LearnBlock {
  id: number;
  type: LearnBlockType;
  name: string;
  dsp: number[];
  title: string;
  trainingProcessor?: 'cpu' | 'gpu';
  createdAt: string;
}

export interface PostProcessingBlock {
  id: number;
  type: string;
  name: string;
  title: string;
  implementationVersion: number;
  createdAt: string;
}

// A type, not an interface: event data must be assignable to Record<string, unknown>.
export type ImpulseBlocks = {
  inputBlocks: InputBlock[];
  dspBlocks: DspBlock[];
  learnBlocks: LearnBlock[];
  postProcessingBlocks: PostProcessingBlock[];
};

export type ImpulseCreated = DomainEvent<'ImpulseCreated', { projectId: number; impulseId: number; name: string; type: ImpulseType; created: string } & ImpulseBlocks>;

/**
 * The blocks of an impulse were replaced. The saved configs of DSP blocks that were removed, or
 * whose type or version changed, no longer apply: `clearedDspIds` names them.
 */
export type ImpulseBlocksReplaced = DomainEvent<
  'ImpulseBlocksReplaced',
  { projectId: number; impulseId: number; name: string; type: ImpulseType; clearedDspIds: number[]; replaced: string } & ImpulseBlocks
>;

/** Only the fields present changed. */
export type ImpulseUpdated = DomainEvent<'ImpulseUpdated', { projectId: number; impulseId: number; name?: string; tags?: string[]; type?: ImpulseType; updated: string }>;

export type ImpulseDeleted = DomainEvent<'ImpulseDeleted', { projectId: number; impulseId: number; deleted: string }>;

/** A block id handed to a client (getNewBlockId): never handed out again. */
export type BlockIdIssued = DomainEvent<'BlockIdIssued', { projectId: number; blockId: number; issued: string }>;

/** The whole resolved config (defaults, then the saved values, then the changes). */
export type DspConfigSet = DomainEvent<'DspConfigSet', { projectId: number; impulseId: number; dspId: number; config: DspConfigValues; set: string }>;

/** The block's saved config (and, once there are any, its generated features) were dropped. */
export type DspBlockCleared = DomainEvent<'DspBlockCleared', { projectId: number; impulseId: number; dspId: number; cleared: string }>;

export type ImpulseEvent = ImpulseCreated | ImpulseBlocksReplaced | ImpulseUpdated | ImpulseDeleted | BlockIdIssued | DspConfigSet | DspBlockCleared;

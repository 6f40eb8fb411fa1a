import type { ImpulseType } from '../../domain/impulse/blockCatalog';
import type { DspConfigValues } from '../../domain/impulse/dspConfig';
import type { DspBlock, InputBlock, LearnBlock, PostProcessingBlock } from '../../domain/impulse/impulseEvents';
import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';

/** The `impulses` read model: one document per impulse (impulse ids are unique across projects). */
export interface ImpulseDocument {
  _id: number;
  id: number;
  projectId: number;
  name: string;
  type: ImpulseType;
  tags: string[];
  inputBlocks: InputBlock[];
  dspBlocks: DspBlock[];
  learnBlocks: LearnBlock[];
  postProcessingBlocks: PostProcessingBlock[];
  /** Saved configs by DSP block id (as a string key); a block without one is not configured. */
  dspConfigs: Record<string, DspConfigValues>;
  created: string;
  lastModified: string;
  /** Kept, flagged, so that a replayed creation cannot bring it back. */
  deleted: boolean;
  _position: string;
  [key: string]: unknown;
}

export const IMPULSES = 'impulses';

/** A project's impulses by id (the impulse list, the first impulse, the impulse of a DSP block). */
export const IMPULSE_INDEXES: readonly IndexDeclaration[] = [{ keys: { projectId: 1, deleted: 1, _id: 1 } }];


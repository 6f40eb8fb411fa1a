import type { DspFeaturesGenerated } from '../../domain/dsp/dspFeaturesEvents';

/** The latest generated features of a DSP block of a project (one document per project and block). */
export type DspFeaturesDocument = Omit<DspFeaturesGenerated['data'], 'dspConfig'> & {
  _id: string;
  /** Block config keys are parameter names (dashes, no dots or dollars); kept as a list to stay field-name safe. */
  dspConfig: { param: string; value: string }[];
  /** False once the block was cleared (DspBlockCleared) after these features were made. */
  current: boolean;
  _position: string;
  [key: string]: unknown;
};

export const DSP_FEATURES = 'dspFeatures';
export const dspFeaturesId = (projectId: number, dspId: number): string => `${projectId}:${dspId}`;

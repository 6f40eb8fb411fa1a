// The official block catalog: what an impulse may be built from. Pure data, served by
// GET /api/{projectId}/impulse/blocks and by the white-label catalog, and used by the impulse
// decider to check the blocks of an impulse.
import {
  FLATTEN_PARAMETERS,
  IMAGE_PARAMETERS,
  MFCC_PARAMETERS,
  MFE_PARAMETERS,
  RAW_PARAMETERS,
  SPECTRAL_ANALYSIS_PARAMETERS,
  SPECTROGRAM_PARAMETERS,
  type DspGroupItem,
  type DspParameterGroup,
} from './dspParameters';

export const INPUT_BLOCK_TYPES = ['time-series', 'image', 'features'] as const;
export type InputBlockType = (typeof INPUT_BLOCK_TYPES)[number];

export const LEARN_BLOCK_TYPES = [
  'anomaly', 'anomaly-gmm', 'keras', 'keras-transfer-image', 'keras-transfer-kws', 'keras-object-detection', 'keras-regression', 'keras-akida',
  'keras-akida-transfer-image', 'keras-akida-object-detection', 'keras-visual-anomaly', 'keras-freeform', 'keras-anomaly', 'vlm',
] as const;
export type LearnBlockType = (typeof LEARN_BLOCK_TYPES)[number];

export const IMPULSE_TYPES = ['default', 'BYOM', 'VLM'] as const;
export type ImpulseType = (typeof IMPULSE_TYPES)[number];

const OFFICIAL = { author: 'Edge Impulse', blockType: 'official' } as const;

interface CommonBlock {
  type: string;
  title: string;
  author: string;
  description: string;
  name: string;
  blockType: 'official' | 'personal' | 'enterprise' | 'community';
}

export interface InputBlockInfo extends CommonBlock {
  type: InputBlockType;
}

export interface DspBlockInfo extends CommonBlock {
  recommended: boolean;
  experimental: boolean;
  latestImplementationVersion: number;
  namedAxes?: { name: string; description: string; required: boolean }[];
  supportedTargets?: string[];
}

/** What the catalog knows about a DSP block besides what it serves. */
export interface DspBlockDefinition {
  info: DspBlockInfo;
  /** The input block types it can process. */
  inputTypes: readonly InputBlockType[];
  /** Audio-style blocks process exactly one axis. */
  singleAxis: boolean;
  parameters: readonly DspParameterGroup[];
  canCalculateFeatureImportance: boolean;
  hasAutoTune: boolean;
  minimumVersionForAutotune?: number;
}

export interface LearnBlockInfo extends CommonBlock {
  type: LearnBlockType;
  recommended: boolean;
  displayCategory?: 'classical' | 'tao' | 'developer-preview';
  publicProjectTierAvailability?: 'enterprise-only' | 'all-projects' | 'all-projects-including-whitelabels';
  isPublicEnterpriseOnly?: boolean;
  supportedTargets?: string[];
}

export interface PostProcessingBlockInfo extends CommonBlock {
  recommended: boolean;
  experimental: boolean;
  latestImplementationVersion: number;
  defaultParameters: DspGroupItem[];
  supportedTargets?: string[];
}

export const INPUT_BLOCKS: readonly InputBlockInfo[] = [
  { ...OFFICIAL, type: 'time-series', title: 'Time series data', name: 'Time series', description: 'Operates on time series sensor data like vibration or audio data. Lets you slice up data into windows.' },
  { ...OFFICIAL, type: 'image', title: 'Images', name: 'Image', description: 'Operates on image data. Lets you resize, crop and pad images.' },
  { ...OFFICIAL, type: 'features', title: 'Features', name: 'Features', description: 'Operates on tabular data: every sample is already one set of features.' },
];

// The audio blocks take exactly one axis: naming it lets a client map it to an input axis.
const SIGNAL_AXIS = [{ name: 'Signal', description: 'The one axis this block processes (e.g. audio)', required: true }];

const dsp = (
  info: Omit<DspBlockInfo, 'author' | 'blockType' | 'experimental'> & { experimental?: boolean },
  rest: Omit<DspBlockDefinition, 'info'>,
): DspBlockDefinition => ({ info: { ...OFFICIAL, experimental: false, ...info }, ...rest });

const noAutoTune = { hasAutoTune: false } as const;

export const DSP_BLOCKS: readonly DspBlockDefinition[] = [
  dsp(
    { type: 'raw', title: 'Raw Data', name: 'Raw data', description: 'Use data without pre-processing. Useful if you want to use deep learning to learn features.', recommended: false, latestImplementationVersion: 1 },
    { inputTypes: ['time-series', 'features'], singleAxis: false, parameters: RAW_PARAMETERS, canCalculateFeatureImportance: true, ...noAutoTune },
  ),
  dsp(
    { type: 'flatten', title: 'Flatten', name: 'Flatten', description: 'Flatten an axis into a single value, useful for slow-moving averages like temperature data, in combination with other blocks.', recommended: false, latestImplementationVersion: 1 },
    { inputTypes: ['time-series'], singleAxis: false, parameters: FLATTEN_PARAMETERS, canCalculateFeatureImportance: true, ...noAutoTune },
  ),
  dsp(
    { type: 'image', title: 'Image', name: 'Image', description: 'Preprocess and normalize image data, and optionally reduce the color depth.', recommended: true, latestImplementationVersion: 1 },
    { inputTypes: ['image'], singleAxis: false, parameters: IMAGE_PARAMETERS, canCalculateFeatureImportance: false, ...noAutoTune },
  ),
  dsp(
    { type: 'spectral-analysis', title: 'Spectral Analysis', name: 'Spectral features', description: 'Great for analyzing repetitive motion, such as data from accelerometers. Extracts the frequency and power characteristics of a signal over time.', recommended: true, latestImplementationVersion: 4 },
    { inputTypes: ['time-series'], singleAxis: false, parameters: SPECTRAL_ANALYSIS_PARAMETERS, canCalculateFeatureImportance: true, hasAutoTune: true, minimumVersionForAutotune: 4 },
  ),
  dsp(
    { type: 'mfe', title: 'Audio (MFE)', name: 'MFE', description: 'Extracts a spectrogram from audio signals using Mel-filterbank energy features, great for non-voice audio.', recommended: true, latestImplementationVersion: 4, namedAxes: SIGNAL_AXIS },
    { inputTypes: ['time-series'], singleAxis: true, parameters: MFE_PARAMETERS, canCalculateFeatureImportance: false, hasAutoTune: true },
  ),
  dsp(
    { type: 'mfcc', title: 'Audio (MFCC)', name: 'MFCC', description: 'Extracts features from audio signals using Mel Frequency Cepstral Coefficients, great for human voice.', recommended: true, latestImplementationVersion: 4, namedAxes: SIGNAL_AXIS },
    { inputTypes: ['time-series'], singleAxis: true, parameters: MFCC_PARAMETERS, canCalculateFeatureImportance: false, hasAutoTune: true },
  ),
  dsp(
    { type: 'spectrogram', title: 'Spectrogram', name: 'Spectrogram', description: 'Extracts a spectrogram from audio or sensor data, great for non-voice audio or data with continuous frequencies.', recommended: false, latestImplementationVersion: 4, namedAxes: SIGNAL_AXIS },
    { inputTypes: ['time-series'], singleAxis: true, parameters: SPECTROGRAM_PARAMETERS, canCalculateFeatureImportance: false, hasAutoTune: true },
  ),
];

const learn = (info: Omit<LearnBlockInfo, 'author' | 'blockType'>): LearnBlockInfo => ({ ...OFFICIAL, displayCategory: 'classical', ...info });

export const LEARN_BLOCKS: readonly LearnBlockInfo[] = [
  learn({ type: 'keras', title: 'Classification', name: 'Classifier', description: 'Learns patterns from data, and can apply these to new data. Great for categorizing movement or recognizing audio.', recommended: true }),
  learn({ type: 'keras-regression', title: 'Regression', name: 'Regression', description: 'Learns patterns from data, and can apply these to new data. Great for predicting numeric continuous values.', recommended: false }),
  learn({ type: 'anomaly', title: 'Anomaly Detection (K-means)', name: 'Anomaly detection', description: 'Find outliers in new data. Good for recognizing unknown states, and to complement classifiers.', recommended: false }),
  learn({ type: 'anomaly-gmm', title: 'Anomaly Detection (GMM)', name: 'Anomaly detection (GMM)', description: 'Find outliers in new data with a Gaussian Mixture Model. Works well when classes overlap.', recommended: false }),
  learn({ type: 'keras-transfer-image', title: 'Transfer Learning (Images)', name: 'Transfer learning', description: 'Fine tune a pre-trained image classification model on your data. Good performance even with relatively small image datasets.', recommended: true }),
  learn({ type: 'keras-transfer-kws', title: 'Transfer Learning (Keyword Spotting)', name: 'Transfer learning', description: 'Fine tune a pre-trained keyword spotting model on your data. Good performance even with relatively small keyword datasets.', recommended: false }),
  learn({ type: 'keras-object-detection', title: 'Object Detection (Images)', name: 'Object detection', description: 'Fine tune a pre-trained object detection model on your data. Good performance even with relatively small image datasets.', recommended: true }),
  learn({ type: 'keras-visual-anomaly', title: 'Visual Anomaly Detection', name: 'Visual anomaly detection', description: 'Find anomalies in images with a pre-trained feature extractor.', recommended: false, displayCategory: 'developer-preview' }),
];

export const POST_PROCESSING_BLOCKS: readonly PostProcessingBlockInfo[] = [
  {
    ...OFFICIAL,
    type: 'object-tracking',
    title: 'Object tracking',
    name: 'Object tracking',
    description: 'Tracks the objects an object detection model finds across consecutive frames.',
    recommended: false,
    experimental: true,
    latestImplementationVersion: 1,
    defaultParameters: [
      { name: 'Keep grace', param: 'keep_grace', type: 'int', defaultValue: '5', help: 'Frames an object may be missing before it is dropped', readonly: false, shouldShow: true, required: true, showClickToSet: false, minVal: 0 },
      { name: 'Max observations', param: 'max_observations', type: 'int', defaultValue: '5', help: 'Observations kept per track', readonly: false, shouldShow: true, required: true, showClickToSet: false, minVal: 1 },
      { name: 'Threshold', param: 'threshold', type: 'float', defaultValue: '0.5', help: 'Minimum overlap to match a detection with a track', readonly: false, shouldShow: true, required: true, showClickToSet: false, minVal: 0, maxVal: 1 },
    ],
  },
];

export const dspBlockDefinition = (type: string): DspBlockDefinition | undefined => DSP_BLOCKS.find((b) => b.info.type === type);
export const learnBlockInfo = (type: string): LearnBlockInfo | undefined => LEARN_BLOCKS.find((b) => b.type === type);
export const postProcessingBlockInfo = (type: string): PostProcessingBlockInfo | undefined => POST_PROCESSING_BLOCKS.find((b) => b.type === type);
export const inputBlockInfo = (type: string): InputBlockInfo | undefined => INPUT_BLOCKS.find((b) => b.type === type);

/** GetImpulseBlocksResponse without `success`: the whole official catalog. */
export function impulseBlockCatalog(): {
  inputBlocks: InputBlockInfo[];
  dspBlocks: DspBlockInfo[];
  learnBlocks: LearnBlockInfo[];
  postProcessingBlocks: PostProcessingBlockInfo[];
} {
  return {
    inputBlocks: [...INPUT_BLOCKS],
    dspBlocks: DSP_BLOCKS.map((b) => b.info),
    learnBlocks: [...LEARN_BLOCKS],
    postProcessingBlocks: [...POST_PROCESSING_BLOCKS],
  };
}

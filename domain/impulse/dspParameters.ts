// Parameter descriptors of the official processing blocks, as their parameters.json files give them
// (dsp-reference.md sections 2 to 8). They are served as DSPGroupItem groups, and setDspConfig
// checks the values a client sends against them (dspConfig.ts).

export type ParameterType = 'int' | 'float' | 'boolean' | 'select' | 'string';

export interface SelectOption {
  value: string;
  optionLabel: string;
  selected?: boolean;
  priority?: number;
  romEstimate?: number;
  needsOps?: string[];
  needsFeatures?: string[];
}

/** The SDK's DSPGroupItem, without `value` (that is the block's current config, added when served). */
export interface DspGroupItem {
  name: string;
  value?: string;
  defaultValue: string;
  type: ParameterType;
  help?: string;
  param: string;
  selectOptions?: SelectOption[];
  readonly: boolean;
  shouldShow: boolean;
  showIf?: { parameter: string; operator: 'eq' | 'neq'; value: string };
  invalidText?: string;
  section?: 'advanced' | 'augmentation' | 'modelProfiling';
  multiline?: boolean;
  required: boolean;
  hint?: string;
  placeholder?: string;
  showClickToSet: boolean;
  minVal?: number;
  maxVal?: number;
}

/** A descriptor plus what only we use: the implementation versions that show it. */
export interface DspParameter extends DspGroupItem {
  /** Shown only for these implementation versions; every version when absent. */
  versions?: readonly number[];
}

export interface DspParameterGroup {
  group: string;
  items: readonly DspParameter[];
}

type ParameterInput = Pick<DspParameter, 'param' | 'name' | 'type' | 'defaultValue'> &
  Partial<Pick<DspParameter, 'help' | 'minVal' | 'maxVal' | 'showIf' | 'section' | 'versions' | 'required' | 'hint' | 'shouldShow'>> & {
    options?: readonly (string | [value: string, label: string])[];
  };

function parameter(p: ParameterInput): DspParameter {
  const { options, ...rest } = p;
  return {
    readonly: false,
    shouldShow: true,
    required: true,
    showClickToSet: false,
    ...rest,
    ...(options
      ? {
          selectOptions: options.map((o) => {
            const [value, optionLabel] = typeof o === 'string' ? [o, o] : o;
            return { value, optionLabel, selected: value === p.defaultValue };
          }),
        }
      : {}),
  };
}

const scaleAxes = parameter({ param: 'scale-axes', name: 'Scale axes', type: 'float', defaultValue: '1', help: 'Multiplies axes by this number', minVal: 0 });

export const RAW_PARAMETERS: readonly DspParameterGroup[] = [{ group: 'Scaling', items: [scaleAxes] }];

const statistic = (param: string, name: string, help: string) => parameter({ param, name, type: 'boolean', defaultValue: 'true', help });

export const FLATTEN_PARAMETERS: readonly DspParameterGroup[] = [
  { group: 'Scaling', items: [scaleAxes] },
  {
    group: 'Method',
    items: [
      statistic('average', 'Average', 'Mean of each axis'),
      statistic('minimum', 'Minimum', 'Minimum of each axis'),
      statistic('maximum', 'Maximum', 'Maximum of each axis'),
      statistic('rms', 'Root-mean square', 'Square root of the mean of the squares'),
      statistic('stdev', 'Standard deviation', 'Population standard deviation'),
      statistic('skewness', 'Skewness', 'Asymmetry of the distribution'),
      statistic('kurtosis', 'Kurtosis', 'Tailedness of the distribution (Fisher)'),
    ],
  },
];

export const IMAGE_PARAMETERS: readonly DspParameterGroup[] = [
  { group: 'Parameters', items: [parameter({ param: 'channels', name: 'Color depth', type: 'select', defaultValue: 'RGB', options: ['RGB', 'Grayscale'] })] },
];

const filterShown = { parameter: 'filter-type', operator: 'neq', value: 'none' } as const;
const fftShown = { parameter: 'analysis-type', operator: 'eq', value: 'FFT' } as const;
const waveletShown = { parameter: 'analysis-type', operator: 'eq', value: 'Wavelet' } as const;

/** PyWavelets names accepted by the spectral-analysis block's wavelet analysis. */
export const WAVELETS = [
  'bior1.3', 'bior1.5', 'bior2.2', 'bior2.4', 'bior2.6', 'bior2.8', 'bior3.1', 'bior3.3', 'bior3.5', 'bior3.7', 'bior3.9', 'bior4.4', 'bior5.5', 'bior6.8',
  'coif1', 'coif2', 'coif3',
  'db2', 'db3', 'db4', 'db5', 'db6', 'db7', 'db8', 'db9', 'db10',
  'haar',
  'rbio1.3', 'rbio1.5', 'rbio2.2', 'rbio2.4', 'rbio2.6', 'rbio2.8', 'rbio3.1', 'rbio3.3', 'rbio3.5', 'rbio3.7', 'rbio3.9', 'rbio4.4', 'rbio5.5', 'rbio6.8',
  'sym2', 'sym3', 'sym4', 'sym5', 'sym6', 'sym7', 'sym8', 'sym9', 'sym10',
] as const;

export const SPECTRAL_ANALYSIS_PARAMETERS: readonly DspParameterGroup[] = [
  {
    group: 'Scaling',
    items: [
      scaleAxes,
      parameter({
        param: 'input-decimation-ratio', name: 'Input decimation ratio', type: 'select', defaultValue: '1', versions: [4],
        help: 'Decimates (low-pass filters and downsamples) the signal before analysis', options: ['1', '3', '10', '30', '100', '1000'],
      }),
    ],
  },
  {
    group: 'Filter',
    items: [
      parameter({ param: 'filter-type', name: 'Type', type: 'select', defaultValue: 'none', options: [['low', 'Low-pass'], ['high', 'High-pass'], ['none', 'None']] }),
      parameter({ param: 'filter-cutoff', name: 'Cut-off frequency', type: 'float', defaultValue: '3', help: 'Cut-off frequency in hertz', minVal: 0, showIf: filterShown }),
      parameter({ param: 'filter-order', name: 'Order', type: 'int', defaultValue: '6', help: '0 only masks FFT bins; otherwise an even order from 2 to 8', minVal: 0, maxVal: 8, showIf: filterShown }),
    ],
  },
  {
    group: 'Analysis',
    items: [
      parameter({ param: 'analysis-type', name: 'Type', type: 'select', defaultValue: 'FFT', versions: [3, 4], options: ['FFT', 'Wavelet'] }),
      parameter({ param: 'fft-length', name: 'FFT length', type: 'int', defaultValue: '16', help: 'Number of FFT points (a power of 2)', minVal: 2, maxVal: 4096 }),
      parameter({ param: 'spectral-peaks-count', name: 'No. of peaks', type: 'int', defaultValue: '3', versions: [1], minVal: 0 }),
      parameter({ param: 'spectral-peaks-threshold', name: 'Peaks threshold', type: 'float', defaultValue: '0.1', versions: [1], minVal: 0 }),
      parameter({ param: 'spectral-power-edges', name: 'Spectral power edges', type: 'string', defaultValue: '0.1, 0.5, 1.0, 2.0, 5.0', versions: [1] }),
      parameter({ param: 'do-log', name: 'Take log of spectrum?', type: 'boolean', defaultValue: 'true', versions: [2, 3, 4], showIf: fftShown }),
      parameter({ param: 'do-fft-overlap', name: 'Overlap FFT frames?', type: 'boolean', defaultValue: 'true', versions: [2, 3, 4], showIf: fftShown }),
      parameter({ param: 'extra-low-freq', name: 'Improve low frequency resolution?', type: 'boolean', defaultValue: 'false', versions: [4], showIf: fftShown }),
      parameter({ param: 'wavelet-level', name: 'Wavelet decomposition level', type: 'int', defaultValue: '1', versions: [3, 4], minVal: 0, showIf: waveletShown }),
      parameter({ param: 'wavelet', name: 'Wavelet', type: 'select', defaultValue: 'db4', versions: [3, 4], showIf: waveletShown, options: WAVELETS }),
    ],
  },
];

const frameLength = (defaultValue: string) =>
  parameter({ param: 'frame_length', name: 'Frame length', type: 'float', defaultValue, help: 'The length of each frame in seconds', minVal: 0.001 });
const frameStride = (defaultValue: string) =>
  parameter({ param: 'frame_stride', name: 'Frame stride', type: 'float', defaultValue, help: 'The step between successive frames in seconds', minVal: 0.001 });
const fftLength = (defaultValue: string) =>
  parameter({ param: 'fft_length', name: 'FFT length', type: 'int', defaultValue, help: 'Number of FFT points (a power of 2)', minVal: 16, maxVal: 4096 });
const lowFrequency = parameter({ param: 'low_frequency', name: 'Low frequency', type: 'int', defaultValue: '0', help: 'Lowest band edge of the mel filters (Hz)', minVal: 0 });
const highFrequency = parameter({
  param: 'high_frequency', name: 'High frequency', type: 'int', defaultValue: '0', required: false, minVal: 0,
  help: 'Highest band edge of the mel filters (Hz); 0 means half the sampling frequency',
});
const noiseFloor = parameter({
  param: 'noise_floor_db', name: 'Noise floor (dB)', type: 'int', defaultValue: '-52', versions: [3, 4], minVal: -100, maxVal: 0,
  help: 'Everything below this loudness is treated as silence',
});

export const MFE_PARAMETERS: readonly DspParameterGroup[] = [
  {
    group: 'Mel-filterbank energy features',
    items: [
      frameLength('0.02'),
      frameStride('0.01'),
      parameter({ param: 'num_filters', name: 'Filter number', type: 'int', defaultValue: '40', help: 'The number of mel filters', minVal: 2, maxVal: 512 }),
      fftLength('256'),
      lowFrequency,
      highFrequency,
    ],
  },
  {
    group: 'Normalization',
    items: [
      parameter({ param: 'win_size', name: 'Normalization window size', type: 'int', defaultValue: '101', versions: [1, 2], minVal: 3, help: 'Odd window size of the mean normalization' }),
      noiseFloor,
    ],
  },
];

export const MFCC_PARAMETERS: readonly DspParameterGroup[] = [
  {
    group: 'Mel Frequency Cepstral Coefficients',
    items: [
      parameter({ param: 'num_cepstral', name: 'Number of coefficients', type: 'int', defaultValue: '13', help: 'At most the number of filters', minVal: 1, maxVal: 512 }),
      frameLength('0.02'),
      frameStride('0.02'),
      parameter({ param: 'num_filters', name: 'Filter number', type: 'int', defaultValue: '32', help: 'The number of mel filters', minVal: 2, maxVal: 512 }),
      fftLength('256'),
      parameter({ param: 'win_size', name: 'Normalization window size', type: 'int', defaultValue: '101', minVal: 0, help: '0 disables normalization; otherwise odd' }),
      lowFrequency,
      highFrequency,
    ],
  },
  {
    group: 'Pre-emphasis',
    items: [
      parameter({ param: 'pre_cof', name: 'Coefficient', type: 'float', defaultValue: '0.98', minVal: 0, maxVal: 1, help: '0 means no pre-emphasis' }),
      // Shown for v1 and v2 only, but the block always applies it.
      parameter({ param: 'pre_shift', name: 'Shift', type: 'int', defaultValue: '1', versions: [1, 2], minVal: 1 }),
    ],
  },
];

export const SPECTROGRAM_PARAMETERS: readonly DspParameterGroup[] = [
  {
    group: 'Spectrogram',
    items: [
      frameLength('0.02'),
      frameStride('0.01'),
      fftLength('128'),
      // Deprecated and ignored by the block; kept so old configs stay valid.
      parameter({ param: 'show_axes', name: 'Show axes', type: 'boolean', defaultValue: 'true', shouldShow: false, required: false }),
    ],
  },
  { group: 'Normalization', items: [noiseFloor] },
];

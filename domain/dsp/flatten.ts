// flatten (dsp-reference 3): per axis, the enabled statistics in a fixed order.
import { axisStatistics, type AxisStatistics } from './flattenStatistics';
import { DspConfigurationError, type ProcessingBlock } from './processingBlock';
import { boolParam, checkInterleaved, checkVersion, numberParam } from './speech/blockParams';

const STATISTICS: readonly { param: string; label: string; key: keyof AxisStatistics }[] = [
  { param: 'average', label: 'Average', key: 'average' },
  { param: 'minimum', label: 'Minimum', key: 'minimum' },
  { param: 'maximum', label: 'Maximum', key: 'maximum' },
  { param: 'rms', label: 'RMS', key: 'rms' },
  { param: 'stdev', label: 'Stdev', key: 'stdev' },
  { param: 'skewness', label: 'Skewness', key: 'skewness' },
  { param: 'kurtosis', label: 'Kurtosis', key: 'kurtosis' },
];

export const flattenBlock: ProcessingBlock = {
  type: 'flatten',
  implementationVersions: [1],
  dimensionalityReduction: false,
  hasFeatureImportance: true,
  canNormalizeData: true,
  run(input, params, { implementationVersion }) {
    checkVersion('flatten', this.implementationVersions, implementationVersion);
    const samples = checkInterleaved('flatten', input);
    if (samples < 1) throw new DspConfigurationError('"values": the flatten block needs at least one sample');
    const scale = numberParam(params, 'scale-axes', 1);
    const enabled = STATISTICS.filter((s) => boolParam(params, s.param, true));
    const axes = input.axes.length;
    const features = new Float64Array(axes * enabled.length);
    for (let a = 0; a < axes; a++) {
      const stats = axisStatistics(input.values, a, axes, scale);
      enabled.forEach((s, j) => (features[a * enabled.length + j] = stats[s.key]));
    }
    // Per-axis names: the job prefixes the axis ("accX RMS").
    return { features, labels: enabled.map((s) => s.label), outputConfig: { type: 'flat', shape: { width: features.length } }, fftUsed: [], graphs: [] };
  },
};
